/*
 * softdpu: architecture switches (DOCA_ARCH_HOST or DOCA_ARCH_DPU, DOCA_ARCH_X86 or DOCA_ARCH_ARM).
 *
 * In DOCA this header comes with the installed package, so the host/DPU choice is fixed by where
 * DOCA is installed (host or BlueField). softdpu installs both flavours: this header (host,
 * <prefix>/lib/pkgconfig) and include/softdpu/dpu/doca_build_config.h (DOCA_ARCH_DPU, first on the
 * include path of <prefix>/lib/pkgconfig-dpu). This one also has softdpu's own switch:
 *   - by default DOCA_ARCH_HOST is defined (the host side);
 *   - a program compiled with -DSOFTDPU_DPU_SIDE (or with #define SOFTDPU_DPU_SIDE before its first
 *     DOCA include) gets DOCA_ARCH_DPU instead, e.g. for the DPU half of a host/DPU application.
 * Use the same choice in every translation unit of a program. The switch changes only these macros;
 * the softdpu libraries are the same for both sides. DOCA_ARCH_X86 / DOCA_ARCH_ARM follow the
 * compiler's target.
 */
#ifndef DOCA_BUILD_CONFIG_H_
#define DOCA_BUILD_CONFIG_H_

#ifdef SOFTDPU_DPU_SIDE
#define DOCA_ARCH_DPU
#undef DOCA_ARCH_HOST
#else
#define DOCA_ARCH_HOST
#undef DOCA_ARCH_DPU
#endif

#if defined(__x86_64__) || defined(__i386__)
#define DOCA_ARCH_X86
#undef DOCA_ARCH_ARM
#elif defined(__aarch64__)
#define DOCA_ARCH_ARM
#undef DOCA_ARCH_X86
#endif

#endif /* DOCA_BUILD_CONFIG_H_ */

/*
 * softdpu: architecture switches. softdpu builds the host flavour by default; define
 * SOFTDPU_DPU_SIDE before including any DOCA header to compile code paths that DOCA programs
 * guard with DOCA_ARCH_DPU.
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

/*
 * softdpu: architecture switches of the DPU flavour (DOCA_ARCH_DPU, DOCA_ARCH_X86 or DOCA_ARCH_ARM).
 *
 * On a BlueField, DOCA's installed doca_build_config.h defines DOCA_ARCH_DPU, so DOCA programs
 * build the code they guard with DOCA_ARCH_DPU (the DPU half of a host/DPU application, the
 * samples that "can run only on the DPU"). softdpu installs this header in
 * <prefix>/include/softdpu/dpu/, and the pkg-config files of the DPU flavour
 * (<prefix>/lib/pkgconfig-dpu/doca*.pc) put that directory before <prefix>/include, so a program
 * built with PKG_CONFIG_PATH=<prefix>/lib/pkgconfig-dpu gets this header instead of the host one
 * (include/doca_build_config.h) without any change to the program or its build files.
 * It has the host header's include guard: whichever is found first is the one used.
 */
#ifndef DOCA_BUILD_CONFIG_H_
#define DOCA_BUILD_CONFIG_H_

#define DOCA_ARCH_DPU
#undef DOCA_ARCH_HOST

#if defined(__x86_64__) || defined(__i386__)
#define DOCA_ARCH_X86
#undef DOCA_ARCH_ARM
#elif defined(__aarch64__)
#define DOCA_ARCH_ARM
#undef DOCA_ARCH_X86
#endif

#endif /* DOCA_BUILD_CONFIG_H_ */

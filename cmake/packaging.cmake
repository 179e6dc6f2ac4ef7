# Debian packages (CPack): `cpack -G DEB` in a build directory (README, "Packages").
#   softdpu        runtime: the shared libraries (libdoca_*.so.2, libmemif.so.3)
#   softdpu-dev    headers, the .so links, pkg-config files (both flavours), applications/VERSION
#   softdpu-tools  softdpu, softdpu-apsh-config, softdpu-exec-hash-build-map
# The packages install under SOFTDPU_PACKAGE_PREFIX, by default DOCA's own /opt/mellanox/doca, so
# DOCA 2.5's sample and application meson files (which read /opt/mellanox/doca/applications/VERSION)
# configure unchanged. The runtime package registers <prefix>/lib with the dynamic linker
# (/etc/ld.so.conf.d/softdpu.conf, written by postinst and removed by postrm).
set(SOFTDPU_PACKAGE_PREFIX "/opt/mellanox/doca" CACHE PATH "Install prefix of the .deb packages")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME softdpu)
set(CPACK_PACKAGE_VENDOR "softdpu")
set(CPACK_PACKAGE_CONTACT "softdpu maintainers <softdpu@localhost>")
set(CPACK_PACKAGE_VERSION ${SOFTDPU_DOCA_VERSION_STRING})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "softdpu: the NVIDIA DOCA 2.5 programming model in software")
set(CPACK_PACKAGING_INSTALL_PREFIX ${SOFTDPU_PACKAGE_PREFIX})
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/packages)
set(CPACK_COMPONENTS_ALL runtime dev tools)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_STRIP_FILES ON) # no debug information in the packages
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The DOCA libraries depend on libdoca_common.so.2 of the same package (relative to the staging root).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ".${SOFTDPU_PACKAGE_PREFIX}/${CMAKE_INSTALL_LIBDIR}")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME softdpu)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_DEV_PACKAGE_NAME softdpu-dev)
set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME softdpu-tools)
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION "softdpu: DOCA 2.5 libraries (Core, DMA, argp, App Shield) and libmemif 3.1")
set(CPACK_COMPONENT_DEV_DESCRIPTION "softdpu: DOCA 2.5 headers and pkg-config files, host and DPU flavours")
set(CPACK_COMPONENT_TOOLS_DESCRIPTION "softdpu: the softdpu command line and App Shield tools")
# Development files need the libraries and, for pkg-config --static of doca-apsh, yara and libcrypto.
set(CPACK_COMPONENT_DEV_DEPENDS runtime)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "pkg-config")
if(TARGET doca_apsh)
  string(APPEND CPACK_DEBIAN_DEV_PACKAGE_DEPENDS ", libyara-dev, libssl-dev")
endif()

if(NOT SOFTDPU_PACKAGE_PREFIX STREQUAL "/usr")
  set(SOFTDPU_PACKAGE_LIBDIR "${SOFTDPU_PACKAGE_PREFIX}/${CMAKE_INSTALL_LIBDIR}")
  foreach(script postinst postrm)
    configure_file(${CMAKE_CURRENT_LIST_DIR}/deb/${script}.in ${CMAKE_BINARY_DIR}/deb/${script} @ONLY
      FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
  endforeach()
  set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA ${CMAKE_BINARY_DIR}/deb/postinst ${CMAKE_BINARY_DIR}/deb/postrm)
else()
  set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_STRICT_PERMISSION ON)
endif()
include(CPack)

# App Shield on the command line (docs/apsh-cli.md), included from tools/CMakeLists.txt when
# softdpu_apsh is built: "softdpu apsh ..." and the configuration tool softdpu-apsh-config.
if(TARGET softdpu)
  target_sources(softdpu PRIVATE ${CMAKE_CURRENT_LIST_DIR}/apsh_command.cpp ${CMAKE_CURRENT_LIST_DIR}/apsh_watch.cpp ${CMAKE_CURRENT_LIST_DIR}/process_tree.cpp)
  target_link_libraries(softdpu PRIVATE doca_apsh)
  target_compile_definitions(softdpu PRIVATE SOFTDPU_HAVE_APSH=1)
endif()

# softdpu-apsh-config uses no DOCA library. Linked statically when the toolchain can, so that the
# same binary runs inside a minimal guest (busybox initramfs) as well as on the host.
# Its one piece of src/common (regular files only) is compiled in.
add_executable(softdpu-apsh-config ${CMAKE_CURRENT_LIST_DIR}/apsh_config.cpp
  ${CMAKE_SOURCE_DIR}/src/common/regular_file.cpp)
target_include_directories(softdpu-apsh-config PRIVATE ${CMAKE_SOURCE_DIR}/src ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(softdpu-apsh-config PRIVATE nlohmann_json::nlohmann_json CLI11::CLI11)
target_compile_definitions(softdpu-apsh-config PRIVATE SOFTDPU_VERSION="${PROJECT_VERSION}")
include(CheckCXXSourceCompiles)
set(CMAKE_REQUIRED_LINK_OPTIONS -static)
check_cxx_source_compiles("#include <string>\nint main() { return std::string(\"x\").size() == 1 ? 0 : 1; }"
  SOFTDPU_CAN_LINK_STATIC)
unset(CMAKE_REQUIRED_LINK_OPTIONS)
if(SOFTDPU_CAN_LINK_STATIC AND NOT SOFTDPU_SANITIZE)
  target_link_options(softdpu-apsh-config PRIVATE -static)
endif()
install(TARGETS softdpu-apsh-config RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT tools)

// softdpu's run-time directory: where files that live only while programs run (the memif sockets
// of packet links, docs/links.md) are placed. One rule for every module:
//   $SOFTDPU_RUN_DIR when set and not empty, else $XDG_RUNTIME_DIR/softdpu, else /tmp/softdpu-<euid>.
#pragma once

#include <string>

namespace softdpu::common {

// The directory's path (not created, not checked).
std::string run_directory();

// Creates directory `path` with mode 0700 if missing, parents included (an existing one is left as
// it is). Returns 0, or the errno of the step that failed (a component that is not a directory:
// ENOTDIR).
int make_run_directory(const std::string &path);

} // namespace softdpu::common

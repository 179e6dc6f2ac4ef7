// Subcommands of the softdpu CLI. Each takes the arguments after its own name and returns the
// process exit status. Add a subcommand by declaring it here and listing it in softdpu.cpp.
#pragma once

#include <span>
#include <string_view>

namespace softdpu::cli {

using Arguments = std::span<const std::string_view>;

int devices_command(Arguments args);
int topology_command(Arguments args);
int memif_command(Arguments args);
int apsh_command(Arguments args);

} // namespace softdpu::cli

// Test seams of the App Shield API layer (tests only).
#pragma once

#include "apsh/api/objects.hpp"

namespace softdpu::apsh::api::testing {

// Replaces how doca_apsh_system_start opens a guest until the guard is destroyed.
class ScopedOpener {
public:
	explicit ScopedOpener(Opener opener);
	~ScopedOpener();
	ScopedOpener(const ScopedOpener &) = delete;
	ScopedOpener &operator=(const ScopedOpener &) = delete;

private:
	Opener previous_;
};

// Makes the next `count` snapshot allocations fail as if memory ran out (DOCA_ERROR_NO_MEMORY).
void fail_next_allocations(int count) noexcept;

// Makes YaraRules::builtin() fail, as when libyara cannot compile the built-in rules, while `fail` is
// true.
void fail_builtin_yara_rules(bool fail) noexcept;

// Snapshots (arrays) not yet freed, for leak checks.
size_t live_snapshots() noexcept;

} // namespace softdpu::apsh::api::testing

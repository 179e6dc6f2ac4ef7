// The snapshot registry and the test seams of the API layer.
#include "apsh/api/snapshots.hpp"

#include "apsh/api/testing.hpp"
#include "common/injected_failures.hpp"
#include "common/sdk_log.hpp"

#include <atomic>
#include <unordered_map>

namespace softdpu::apsh::api {

namespace {

common::InjectedFailures g_failures;

struct Registry {
	std::mutex mutex;
	std::unordered_map<const void *, std::unique_ptr<SnapshotBase>> snapshots;
};

Registry &registry()
{
	static Registry *instance = new Registry(); // never destroyed: frees may run during exit
	return *instance;
}

std::mutex g_opener_mutex;
Opener &opener_slot()
{
	static Opener opener;
	return opener;
}

} // namespace

bool allocation_should_fail() noexcept
{
	return g_failures.consume();
}

void register_snapshot(const void *key, std::unique_ptr<SnapshotBase> snapshot)
{
	Registry &reg = registry();
	std::lock_guard lock(reg.mutex);
	reg.snapshots[key] = std::move(snapshot);
}

std::unique_ptr<SnapshotBase> take_snapshot(const void *key, const char *function)
{
	if (key == nullptr)
		return nullptr;
	Registry &reg = registry();
	std::lock_guard lock(reg.mutex);
	auto it = reg.snapshots.find(key);
	if (it == reg.snapshots.end()) {
		SDK_LOG_ERR("%s: %p is not an array returned by App Shield (or was freed already); ignored", function,
			    key);
		return nullptr;
	}
	auto snapshot = std::move(it->second);
	reg.snapshots.erase(it);
	return snapshot;
}

SnapshotBase *find_snapshot(const void *key) noexcept
{
	Registry &reg = registry();
	std::lock_guard lock(reg.mutex);
	auto it = reg.snapshots.find(key);
	return it == reg.snapshots.end() ? nullptr : it->second.get();
}

Opener current_opener()
{
	std::lock_guard lock(g_opener_mutex);
	if (opener_slot())
		return opener_slot();
	return [](const SourceSpec &source, const KernelHints &hints, const Limits &limits,
		  std::unique_ptr<LinuxSystem> &out) { return LinuxSystem::open(source, hints, limits, out); };
}

namespace testing {

ScopedOpener::ScopedOpener(Opener opener)
{
	std::lock_guard lock(g_opener_mutex);
	previous_ = std::move(opener_slot());
	opener_slot() = std::move(opener);
}

ScopedOpener::~ScopedOpener()
{
	std::lock_guard lock(g_opener_mutex);
	opener_slot() = std::move(previous_);
}

void fail_next_allocations(int count) noexcept
{
	g_failures.arm(count);
}

size_t live_snapshots() noexcept
{
	Registry &reg = registry();
	std::lock_guard lock(reg.mutex);
	return reg.snapshots.size();
}

} // namespace testing

} // namespace softdpu::apsh::api

// LinuxSystem::open: maps the source, locates the kernel, resolves the layout from BTF and hands
// out the walker (GuestLinux).
#include "apsh/linux/guest_linux.hpp"

namespace softdpu::apsh {

Status LinuxSystem::open(const SourceSpec &source_spec, const KernelHints &hints, const Limits &limits,
			 std::unique_ptr<LinuxSystem> &out)
{
	std::unique_ptr<source::PhysicalMemory> memory;
	Status status = source::PhysicalMemory::open(source_spec, memory);
	if (!status.ok())
		return status;
	// A read that failed because the file shrank (or an I/O error) reads as absent memory; what
	// went wrong then is that, not what the walk made of the missing bytes.
	const source::PhysicalMemory &source = *memory;
	auto image = std::make_unique<kernel::KernelImage>();
	source.begin_query(); // locating the kernel is one pass: its small reads may share pages
	status = kernel::locate_kernel(source, hints, *image);
	source.end_query();
	if (Status failure = source.failure(); !failure.ok())
		return failure;
	if (!status.ok())
		return Status{status.code, source_label(source_spec) + ": " + status.reason};
	std::unique_ptr<os::GuestLinux> system;
	status = os::GuestLinux::create(std::move(memory), std::move(image), limits, system);
	if (!status.ok())
		return Status{status.code, source_label(source_spec) + ": " + status.reason};
	out = std::move(system);
	return Status::success();
}

} // namespace softdpu::apsh

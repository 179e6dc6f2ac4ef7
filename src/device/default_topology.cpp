// The built-in topology: the example of the DOCA Core guide's "Local Device and Representor"
// section. It goes through the same parser as a user's file, so it is validated the same way.
#include "device/topology.hpp"

namespace softdpu::device {

namespace {

constexpr std::string_view kDefaultTopology = R"json({
  "version": 1,
  "host": {
    "functions": [
      { "name": "pf0", "type": "pf", "pci": "0000:0b:00.0", "ibdev": "mlx5_0", "iface": "enp11s0f0np0",
        "vuid": "SDPU0001HPF0", "mac": "02:5d:00:0b:00:00", "ipv4": "192.168.100.1", "ipv6": "fd00:5d:b::1" },
      { "name": "pf1", "type": "pf", "pci": "0000:0b:00.1", "ibdev": "mlx5_1", "iface": "enp11s0f1np1",
        "vuid": "SDPU0001HPF1", "mac": "02:5d:00:0b:00:01", "ipv4": "192.168.101.1", "ipv6": "fd00:5d:b:1::1" },
      { "name": "pf0vf0", "type": "vf", "parent": "pf0", "pci": "0000:0b:00.2", "ibdev": "mlx5_2",
        "iface": "enp11s0f0v0", "vuid": "SDPU0001HPF0VF0", "mac": "02:5d:00:0b:00:02", "ipv4": "192.168.100.2",
        "ipv6": "fd00:5d:b::2" },
      { "name": "pf0vf1", "type": "vf", "parent": "pf0", "pci": "0000:0b:00.3", "ibdev": "mlx5_3",
        "iface": "enp11s0f0v1", "vuid": "SDPU0001HPF0VF1", "mac": "02:5d:00:0b:00:03", "ipv4": "192.168.100.3",
        "ipv6": "fd00:5d:b::3" },
      { "name": "pf1vf0", "type": "vf", "parent": "pf1", "pci": "0000:0b:00.4", "ibdev": "mlx5_4",
        "iface": "enp11s0f1v0", "vuid": "SDPU0001HPF1VF0", "mac": "02:5d:00:0b:00:04", "ipv4": "192.168.101.2",
        "ipv6": "fd00:5d:b:1::2" }
    ]
  },
  "dpu": {
    "functions": [
      { "name": "p0", "type": "pf", "pci": "0000:03:00.0", "ibdev": "mlx5_0", "iface": "p0",
        "vuid": "SDPU0001ECPF0", "mac": "02:5d:00:03:00:00", "ipv4": "192.168.100.254", "ipv6": "fd00:5d:3::fe" },
      { "name": "p1", "type": "pf", "pci": "0000:03:00.1", "ibdev": "mlx5_1", "iface": "p1",
        "vuid": "SDPU0001ECPF1", "mac": "02:5d:00:03:00:01", "ipv4": "192.168.101.254", "ipv6": "fd00:5d:3:1::fe" },
      { "name": "p0s0", "type": "sf", "parent": "p0", "ibdev": "mlx5_2", "iface": "en3f0pf0sf0",
        "vuid": "SDPU0001PF0SF0", "mac": "02:5d:00:03:10:00", "ipv4": "192.168.200.1", "ipv6": "fd00:5d:3:10::1" },
      { "name": "p1s0", "type": "sf", "parent": "p1", "ibdev": "mlx5_3", "iface": "en3f1pf1sf0",
        "vuid": "SDPU0001PF1SF0", "mac": "02:5d:00:03:10:01", "ipv4": "192.168.201.1", "ipv6": "fd00:5d:3:11::1" }
    ],
    "representors": [
      { "name": "hpf0", "manager": "p0", "function": "pf0", "iface": "pf0hpf" },
      { "name": "hpf0vf0", "manager": "p0", "function": "pf0vf0", "iface": "pf0vf0" },
      { "name": "hpf0vf1", "manager": "p0", "function": "pf0vf1", "iface": "pf0vf1" },
      { "name": "pf0sf0", "manager": "p0", "function": "p0s0", "iface": "pf0sf0" },
      { "name": "hpf1", "manager": "p1", "function": "pf1", "iface": "pf1hpf" },
      { "name": "hpf1vf0", "manager": "p1", "function": "pf1vf0", "iface": "pf1vf0" },
      { "name": "pf1sf0", "manager": "p1", "function": "p1s0", "iface": "pf1sf0" }
    ]
  }
}
)json";

} // namespace

std::string_view Topology::builtin_default_text() noexcept
{
	return kDefaultTopology;
}

} // namespace softdpu::device

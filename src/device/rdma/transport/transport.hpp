// The data transport of softdpu's RDMA device: moving bytes between the processes of one machine,
// under the verbs library and the queue-pair engine (src/verbs, src/device/rdma), never tangled
// into them: plain integers in, a Status out. Same-machine copies today; a network engine can take
// the same interface later. Namespace softdpu::device::rdma::transport.
//
// Interface (each header says more):
//
//   status.hpp         Status: ok, remote_access_error, remote_invalid_request, peer_gone,
//                      local_fault, not_found, refused, invalid_argument, no_resources,
//                      system_error; to_string().
//   shared_region.hpp  SharedRegion::create(size, name, &region[, extra_seals]): a memfd of whole
//                      pages mapped read-write, sealed F_SEAL_GROW|F_SEAL_SHRINK|F_SEAL_SEAL, so no
//                      peer can make a mapping of it fault. SharedRegion::map_received(fd,
//                      expected_size, &region[, writable]): maps one a peer sent after checking it
//                      is a memfd with those seals and exactly round_to_pages(expected_size) bytes
//                      (else refused). data(), size(), fd(). classify_fd(): memfd/eventfd/other.
//   memory_table.hpp   MemoryTable::instance(): this process's registrations (a fresh table in a
//                      forked child). add(addr, length, iova, access, pd_id, &key): key = index << 8
//                      | tag, the tag rotating 1..255, never 0; no_resources when all 8192 entries
//                      are in use. remove(key[, wait = 1 s]): invalid at once, then waits for the
//                      accesses in progress. lookup(key) -> optional<Registration> and check(key,
//                      iova, length, access, pd_id, &addr) for local (lkey) checks. Access bits
//                      are IBV_ACCESS_* values (kAccess*).
//   connection.hpp     Binding::bind(fabric, fds, info, on_disconnect, &binding): a qpn in
//                      [0x100, 0xFFFFFF] unique on the machine for that fabric name ("host/pf0").
//                      Peer::connect(fabric, qpn, on_disconnect, &peer): the bound process's pid,
//                      descriptors (regions mapped read-write, eventfds), info bytes and memory
//                      table. Peer::write/read/write_batch/read_batch/compare_swap/fetch_add/notify.
//                      Ticker::start(fn, &ticker): fn every 1 ms on the agent thread.
//
// Addressing. A queue pair is bound to the Linux abstract unix socket
// "\0softdpu-rdma/<euid>/<fabric>/<qpn as 6 hex digits>" (SOCK_SEQPACKET). bind(2) failing with
// EADDRINUSE makes allocation atomic machine-wide; the kernel frees the name with the socket, so
// nothing is left behind even on kill -9. Abstract names belong to a network namespace: processes
// in different ones do not see each other. Anyone may bind any abstract name, so both sides check
// SO_PEERCRED: the bound side answers only its own user, the connector accepts only its own user.
//
// The agent. Each process has one agent thread, started on its first Binding, Peer or Ticker and
// living until the process ends. It waits in epoll on: the listening sockets of Bindings (accept,
// check the connector's uid, answer with one message carrying the descriptors by SCM_RIGHTS:
// the Binding's, then the memory table's rules and shared files); the open connections of both
// sides (a hang-up, i.e. the other process exited or closed its Binding/Peer, calls the
// on_disconnect callback with the other pid and makes the Peer's accesses return peer_gone); and a
// timerfd firing every 1 ms while a Ticker lives. Callbacks run on the agent thread, one at a time;
// after a Binding's, Peer's or Ticker's destructor returns none of its callbacks runs (except when
// it is destroyed from a callback). Callbacks must not wait for threads that destroy these objects,
// and Peer::connect must not be called from a callback (the agent answers connections).
//
// What a connector trusts. Nothing the peer sends: the message must have exactly the expected
// size, magic and counts; every descriptor must be of the kind it claims (a memfd sealed with
// kRegionSeals of the declared, page-multiple size, or an eventfd); the table files must be memfds
// of exactly the table layouts' sizes, the rules sealed with F_SEAL_FUTURE_WRITE (mapped read-only
// here: no peer can widen a registration), with matching magics and owner pid. The data path reads
// only fixed-size mappings with bounds-checked indices, and copies only with process_vm_readv/
// writev into the peer's address space: a lying peer can at worst make its own memory be written.
//
// Remote access. MemoryTable's rules file (owner-written, sealed with F_SEAL_FUTURE_WRITE) holds
// per entry {state, key, access, pd_id, iova, addr, length, generation}; its shared file holds an
// accessor slot per accessing process {pid, in_access} and 1024 striped spinlocks for atomics.
// An access: in_access++ (seq_cst) -> check key/state/tag/range/access/PD -> process_vm_writev/readv
// (one system call for a batch of up to IOV_MAX pieces) -> in_access--. remove() marks the entry
// invalid (seq_cst), then waits until no live accessor is inside an access (bounded; an accessor
// that died is skipped; on timeout the entry is retired for good). Atomics take the stripe lock of
// the target address (a word holding the holder's pid; a holder that exited is broken by the next
// taker, a live one holding it past kLockWait fails the atomic), read 8 bytes, write the result, unlock: atomic against
// every other softdpu atomic on that memory, not against the target's own CPU stores (as on hardware, where CPU and NIC
// atomics do not mix). Peer gone: ESRCH from the copy, or the agent having seen the hang-up (the socket closes when the
// peer exits, long before its pid could be reused).
//
// Not usable in a forked child: Bindings, Peers and Tickers of the parent (the child gets its own
// MemoryTable and agent when it makes new ones).
#pragma once

#include "device/rdma/transport/connection.hpp"
#include "device/rdma/transport/memory_table.hpp"
#include "device/rdma/transport/shared_region.hpp"
#include "device/rdma/transport/status.hpp"

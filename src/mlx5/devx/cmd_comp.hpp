// Asynchronous DevX queries (mlx5dv_devx_obj_query_async) and their completion channel
// (mlx5dv_devx_create_cmd_comp, _destroy_cmd_comp, _get_async_cmd_comp), as the kernel's
// (notes §6.6): a query passes the same checks as mlx5dv_devx_obj_query, then its record
// {wr_id, outbox of outlen bytes} is queued whatever the command's status (the reader checks the
// status in the outbox); at most 1 MiB of outboxes wait per channel (EAGAIN beyond).
#pragma once

#include "mlx5/devx/objects.hpp"

#include <infiniband/mlx5dv.h>

namespace softdpu::mlx5::devx {

// Null with errno (ENOMEM, EMFILE).
CmdComp *create_cmd_comp() noexcept;
void destroy_cmd_comp(CmdComp *comp) noexcept;
// 0 or an errno value (EAGAIN: the budget is used up; the query's own check errors).
int query_async(Object &object, const void *in, size_t inlen, size_t outlen, uint64_t wr_id, CmdComp &comp) noexcept;
// One record into `resp`: 0; EAGAIN (none waits and the fd is non-blocking); ENOSPC (the record is
// longer than resp_len: it stays queued); EINVAL (resp_len under 8 bytes).
int get_async_cmd_comp(CmdComp &comp, mlx5dv_devx_async_cmd_hdr *resp, size_t resp_len) noexcept;

} // namespace softdpu::mlx5::devx

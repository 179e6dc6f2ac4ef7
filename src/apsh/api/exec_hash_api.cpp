// softdpu/apsh.h, exec hash maps: thin forwarders over ExecHashMap (exec_hash.hpp).
#include "apsh/api/exec_hash.hpp"
#include "common/api_barrier.hpp"
#include "common/sdk_log.hpp"

#include <softdpu/apsh.h>

#include <string>

using softdpu::apsh::Status;
using softdpu::common::api_barrier;
namespace api = softdpu::apsh::api;

// The map, the text of its last format, and the reason of the last failed add.
struct softdpu_apsh_exec_hash_map {
	api::ExecHashMap map;
	std::string text;
	std::string error;
};

extern "C" {

doca_error_t softdpu_apsh_exec_hash_map_create(softdpu_apsh_exec_hash_map **map)
{
	if (map == nullptr) {
		SDK_LOG_ERR("%s: NULL map", __func__);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return api_barrier(__func__, [&] {
		*map = new softdpu_apsh_exec_hash_map();
		return DOCA_SUCCESS;
	});
}

doca_error_t softdpu_apsh_exec_hash_map_add_file(softdpu_apsh_exec_hash_map *map, const char *file_path,
						 const char *recorded_path)
{
	if (map == nullptr || file_path == nullptr) {
		SDK_LOG_ERR("%s: NULL %s", __func__, map == nullptr ? "map" : "file path");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return api_barrier(__func__, [&] {
		map->error.clear();
		const Status status = api::add_file_to_exec_hash_map(
		    file_path, recorded_path != nullptr ? recorded_path : file_path, map->map);
		if (!status.ok())
			map->error = status.reason;
		return status.code;
	});
}

doca_error_t softdpu_apsh_exec_hash_map_get_num_files(const softdpu_apsh_exec_hash_map *map, uint32_t *num_files)
{
	if (map == nullptr || num_files == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*num_files = static_cast<uint32_t>(map->map.files.size());
	return DOCA_SUCCESS;
}

doca_error_t softdpu_apsh_exec_hash_map_format(softdpu_apsh_exec_hash_map *map, const char **text, size_t *length)
{
	if (map == nullptr || text == nullptr || length == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	return api_barrier(__func__, [&] {
		map->text = api::format_exec_hash_map(map->map);
		*text = map->text.c_str();
		*length = map->text.size();
		return DOCA_SUCCESS;
	});
}

const char *softdpu_apsh_exec_hash_map_get_error(const softdpu_apsh_exec_hash_map *map)
{
	return map != nullptr ? map->error.c_str() : nullptr;
}

void softdpu_apsh_exec_hash_map_destroy(softdpu_apsh_exec_hash_map *map)
{
	delete map;
}

} // extern "C"

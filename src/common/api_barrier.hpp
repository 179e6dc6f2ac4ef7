// The exception barrier of the C API: a *_api.cpp forwarder runs the C++ code beneath it through
// api_barrier, so that no C++ exception ever crosses extern "C". std::bad_alloc becomes
// DOCA_ERROR_NO_MEMORY; any other exception (a bug: the code beneath reports errors as codes) is
// logged with the function's name and becomes on_exception (DOCA_ERROR_UNEXPECTED unless the
// function documents another code for internal failures, e.g. App Shield's INITIALIZATION).
#pragma once

#include "common/sdk_log.hpp"

#include <doca_error.h>

#include <exception>
#include <new>
#include <type_traits>

namespace softdpu::common {

// Runs body() and returns its doca_error_t, or the code of what it threw.
template <typename Body>
doca_error_t api_barrier(const char *function, Body &&body, doca_error_t on_exception = DOCA_ERROR_UNEXPECTED) noexcept
{
	try {
		return body();
	} catch (const std::bad_alloc &) {
		SDK_LOG_ERR("%s: out of memory", function);
		return DOCA_ERROR_NO_MEMORY;
	} catch (const std::exception &error) {
		SDK_LOG_ERR("%s: unexpected failure: %s", function, error.what());
		return on_exception;
	} catch (...) {
		SDK_LOG_ERR("%s: unexpected failure", function);
		return on_exception;
	}
}

// For functions that return a value instead of an error code (a pointer, NULL on failure): runs
// body() and returns its result, or on_failure when it threw (logged as above).
template <typename Result, typename Body>
Result api_barrier_or(const char *function, Result on_failure, Body &&body) noexcept
{
	Result result = on_failure;
	if (api_barrier(function, [&]() -> doca_error_t {
		    result = body();
		    return DOCA_SUCCESS;
	    }) != DOCA_SUCCESS)
		return on_failure;
	return result;
}

// The void form of api_barrier_or.
template <typename Body> void api_barrier_void(const char *function, Body &&body) noexcept
{
	(void)api_barrier(function, [&]() -> doca_error_t {
		body();
		return DOCA_SUCCESS;
	});
}

} // namespace softdpu::common

// doca_error.h: names and descriptions of DOCA error codes.
#include <doca_error.h>

#include <array>

namespace {

struct ErrorText {
	const char *name;
	const char *descr;
};

// Indexed by value; DOCA 2.5 defines 0..27 without gaps. The texts are those DOCA 2.5.0108's
// libdoca_common returns (tests/unit/common/error_test.cpp lists them).
constexpr std::array<ErrorText, 28> kErrors = {{
    {"DOCA_SUCCESS", "Success"},
    {"DOCA_ERROR_UNKNOWN", "Unknown error"},
    {"DOCA_ERROR_NOT_PERMITTED", "Operation not permitted"},
    {"DOCA_ERROR_IN_USE", "Resource already in use"},
    {"DOCA_ERROR_NOT_SUPPORTED", "Operation not supported"},
    {"DOCA_ERROR_AGAIN", "Resource temporarily unavailable, try again"},
    {"DOCA_ERROR_INVALID_VALUE", "Invalid input"},
    {"DOCA_ERROR_NO_MEMORY", "Memory allocation failure"},
    {"DOCA_ERROR_INITIALIZATION", "Resource initialization failure"},
    {"DOCA_ERROR_TIME_OUT", "Timer expired waiting for resource"},
    {"DOCA_ERROR_SHUTDOWN", "Shut down in process or completed"},
    {"DOCA_ERROR_CONNECTION_RESET", "Connection reset by peer"},
    {"DOCA_ERROR_CONNECTION_ABORTED", "Connection aborted"},
    {"DOCA_ERROR_CONNECTION_INPROGRESS", "Connection in progress"},
    {"DOCA_ERROR_NOT_CONNECTED", "Not Connected"},
    {"DOCA_ERROR_NO_LOCK", "Unable to acquire required lock"},
    {"DOCA_ERROR_NOT_FOUND", "Requested Resource Not Found"},
    {"DOCA_ERROR_IO_FAILED", "Input/Output Operation Failed"},
    {"DOCA_ERROR_BAD_STATE", "Bad State"},
    {"DOCA_ERROR_UNSUPPORTED_VERSION", "Unsupported version"},
    {"DOCA_ERROR_OPERATING_SYSTEM", "Operating system call failure"},
    {"DOCA_ERROR_DRIVER", "DOCA Driver call failure"},
    {"DOCA_ERROR_UNEXPECTED", "An unexpected scenario was detected"},
    {"DOCA_ERROR_ALREADY_EXIST", "Resource already exist"},
    {"DOCA_ERROR_FULL", "No more space in resource"},
    {"DOCA_ERROR_EMPTY", "No entry is available in resource"},
    {"DOCA_ERROR_IN_PROGRESS", "Operation is in progress"},
    {"DOCA_ERROR_TOO_BIG", "Requested operation too big to be contained"},
}};

constexpr const char *kUnrecognized = "Unrecognized error code";

const ErrorText *lookup(doca_error_t error)
{
	const auto index = static_cast<unsigned int>(error);
	return index < kErrors.size() ? &kErrors[index] : nullptr;
}

} // namespace

extern "C" const char *doca_error_get_name(doca_error_t error)
{
	const ErrorText *text = lookup(error);
	return text != nullptr ? text->name : kUnrecognized;
}

extern "C" const char *doca_error_get_descr(doca_error_t error)
{
	const ErrorText *text = lookup(error);
	return text != nullptr ? text->descr : kUnrecognized;
}

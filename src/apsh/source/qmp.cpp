#include "apsh/source/qmp.hpp"

#include "common/bytes.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace softdpu::apsh::source {

namespace {

Status error(doca_error_t code, std::string reason)
{
	return Status{code, std::move(reason)};
}

} // namespace

Status error_status(doca_error_t code, std::string reason)
{
	return error(code, std::move(reason));
}

// A connected QMP socket that reads line-delimited JSON replies with a deadline.
class QmpConnection {
public:
	~QmpConnection()
	{
		if (fd_ >= 0)
			::close(fd_);
	}

	Status connect(const std::string &path)
	{
		sockaddr_un address{};
		address.sun_family = AF_UNIX;
		if (path.size() >= sizeof(address.sun_path))
			return error(DOCA_ERROR_INVALID_VALUE, "QMP socket path is too long: " + path);
		std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
		fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd_ < 0)
			return error(DOCA_ERROR_OPERATING_SYSTEM, std::string("socket: ") + std::strerror(errno));
		if (::connect(fd_, reinterpret_cast<sockaddr *>(&address), sizeof(address)) != 0)
			return error(DOCA_ERROR_NOT_CONNECTED,
				     "cannot connect to QMP socket " + path + ": " + std::strerror(errno));
		return Status::success();
	}

	Status send(const std::string &command)
	{
		std::string line = command + "\n";
		size_t sent = 0;
		while (sent < line.size()) {
			ssize_t n = ::send(fd_, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return error(DOCA_ERROR_IO_FAILED, std::string("QMP send: ") + std::strerror(errno));
			sent += static_cast<size_t>(n);
		}
		return Status::success();
	}

	// The next JSON object that is not an asynchronous event.
	Status receive(nlohmann::json &reply)
	{
		for (int messages = 0; messages < 1000; messages++) {
			std::string line;
			Status status = read_line(line);
			if (!status.ok())
				return status;
			reply = nlohmann::json::parse(line, nullptr, false);
			if (reply.is_discarded() || !reply.is_object())
				return error(DOCA_ERROR_IO_FAILED, "QMP sent something that is not a JSON object");
			if (!reply.contains("event"))
				return Status::success();
		}
		return error(DOCA_ERROR_IO_FAILED, "QMP sent only events");
	}

private:
	Status read_line(std::string &line)
	{
		constexpr size_t max_reply = 16u << 20;
		for (;;) {
			auto newline = buffer_.find('\n');
			if (newline != std::string::npos) {
				line = buffer_.substr(0, newline);
				buffer_.erase(0, newline + 1);
				return Status::success();
			}
			if (buffer_.size() > max_reply)
				return error(DOCA_ERROR_IO_FAILED, "QMP reply is too long");
			pollfd waiter{fd_, POLLIN, 0};
			int ready = ::poll(&waiter, 1, 5000);
			if (ready < 0 && errno == EINTR)
				continue;
			if (ready == 0)
				return error(DOCA_ERROR_TIME_OUT, "QMP did not answer within 5 s");
			char chunk[65536];
			ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return error(DOCA_ERROR_CONNECTION_RESET, "QMP closed the connection");
			buffer_.append(chunk, static_cast<size_t>(n));
		}
	}

	int fd_ = -1;
	std::string buffer_;
};

namespace {

struct MtreePiece {
	uint64_t start, end; // end exclusive
	uint64_t offset;
	std::string type, name;
};

// "  0000000000000000-000000000009ffff (prio 0, ram): ram0 @0000000000000000 ..."
bool parse_piece(std::string_view line, MtreePiece &piece)
{
	size_t first = line.find_first_not_of(' ');
	if (first == std::string_view::npos)
		return false;
	line.remove_prefix(first);
	size_t dash = line.find('-');
	size_t space = line.find(' ');
	if (dash == std::string_view::npos || space == std::string_view::npos || dash > space)
		return false;
	const auto start = common::parse_hex(line.substr(0, dash));
	const auto last = common::parse_hex(line.substr(dash + 1, space - dash - 1));
	if (!start || !last || *last < *start || *last == UINT64_MAX)
		return false;
	piece.start = *start;
	piece.end = *last + 1;
	size_t comma = line.find(", ", space);
	size_t close = line.find("): ", space);
	if (comma == std::string_view::npos || close == std::string_view::npos || close < comma)
		return false;
	piece.type = std::string(line.substr(comma + 2, close - comma - 2));
	std::string_view rest = line.substr(close + 3);
	size_t name_end = rest.find(' ');
	piece.name = std::string(rest.substr(0, name_end));
	piece.offset = 0;
	size_t at = rest.find(" @");
	if (at != std::string_view::npos) {
		std::string_view offset = rest.substr(at + 2);
		offset = offset.substr(0, offset.find(' '));
		const auto parsed = common::parse_hex(offset);
		if (!parsed)
			return false;
		piece.offset = *parsed;
	}
	return true;
}

} // namespace

Status parse_mtree_ram_ranges(std::string_view text, std::vector<RamRange> &out, std::string *backend_name)
{
	out.clear();
	std::vector<MtreePiece> pieces;
	bool in_memory_view = false, seen_memory_view = false;
	while (!text.empty()) {
		size_t newline = text.find('\n');
		std::string_view line = text.substr(0, newline);
		text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
		if (line.ends_with('\r')) // the human monitor ends lines with CR LF
			line.remove_suffix(1);
		if (line.starts_with("FlatView")) {
			if (seen_memory_view)
				break;
			in_memory_view = false;
			continue;
		}
		if (line.find("AS \"memory\"") != std::string_view::npos) {
			in_memory_view = seen_memory_view = true;
			continue;
		}
		MtreePiece piece;
		if (in_memory_view && parse_piece(line, piece) && (piece.type == "ram" || piece.type == "rom"))
			pieces.push_back(piece);
	}
	if (!seen_memory_view)
		return error(DOCA_ERROR_INVALID_VALUE, "QMP memory tree has no view of the \"memory\" address space");
	// The guest's RAM backend is the RAM region covering the most bytes; ROM aliases of the same
	// backend (the legacy BIOS window) hold RAM bytes too.
	std::map<std::string, uint64_t> ram_bytes;
	for (const MtreePiece &piece : pieces)
		if (piece.type == "ram")
			ram_bytes[piece.name] += piece.end - piece.start;
	if (ram_bytes.empty())
		return error(DOCA_ERROR_INVALID_VALUE, "QMP memory tree lists no RAM");
	auto backend = std::max_element(ram_bytes.begin(), ram_bytes.end(), [](const auto &a, const auto &b) {
			       return a.second < b.second;
		       })->first;
	if (backend_name != nullptr)
		*backend_name = backend;
	for (const MtreePiece &piece : pieces) {
		if (piece.name != backend)
			continue;
		if (!out.empty() && out.back().gpa_end == piece.start &&
		    out.back().file_offset + (out.back().gpa_end - out.back().gpa_start) == piece.offset)
			out.back().gpa_end = piece.end;
		else
			out.push_back({piece.start, piece.end, piece.offset});
	}
	return Status::success();
}

QmpSession::QmpSession() = default;
QmpSession::~QmpSession() = default;

Status QmpSession::open(const std::string &socket_path)
{
	socket_path_ = socket_path;
	connection_ = std::make_unique<QmpConnection>();
	QmpConnection &qmp = *connection_;
	Status status = qmp.connect(socket_path);
	nlohmann::json reply;
	if (status.ok())
		status = qmp.receive(reply); // greeting
	if (status.ok() && !reply.contains("QMP"))
		status = error(DOCA_ERROR_IO_FAILED, "QMP socket " + socket_path + " did not greet with QMP");
	if (status.ok())
		status = qmp.send(R"({"execute":"qmp_capabilities"})");
	if (status.ok())
		status = qmp.receive(reply);
	if (status.ok() && !reply.contains("return"))
		status = error(DOCA_ERROR_IO_FAILED, "QMP refused qmp_capabilities: " + reply.dump());
	if (!status.ok())
		connection_.reset();
	return status;
}

Status QmpSession::hmp(const std::string &command_line, std::string &out)
{
	if (!connection_)
		return error(DOCA_ERROR_BAD_STATE, "QMP session is not open");
	nlohmann::json command = {{"execute", "human-monitor-command"},
				  {"arguments", {{"command-line", command_line}}}};
	nlohmann::json reply;
	Status status = connection_->send(command.dump());
	if (status.ok())
		status = connection_->receive(reply);
	if (!status.ok())
		return status;
	if (!reply.contains("return") || !reply["return"].is_string())
		return error(DOCA_ERROR_IO_FAILED, "QMP refused `" + command_line + "`: " + reply.dump());
	out = reply["return"].get<std::string>();
	return Status::success();
}

Status QmpSession::execute(const std::string &name, std::string *out)
{
	if (!connection_)
		return error(DOCA_ERROR_BAD_STATE, "QMP session is not open");
	nlohmann::json command = {{"execute", name}};
	nlohmann::json reply;
	Status status = connection_->send(command.dump());
	if (status.ok())
		status = connection_->receive(reply);
	if (!status.ok())
		return status;
	if (!reply.contains("return"))
		return error(DOCA_ERROR_IO_FAILED, "QMP refused `" + name + "`: " + reply.dump());
	if (out != nullptr)
		*out = reply["return"].dump();
	return Status::success();
}

Status query_qmp_ram_ranges(const std::string &socket_path, std::vector<RamRange> &out)
{
	QmpSession qmp;
	Status status = qmp.open(socket_path);
	std::string text;
	if (status.ok())
		status = qmp.hmp("info mtree -f", text);
	if (!status.ok())
		return status;
	return parse_mtree_ram_ranges(text, out);
}

} // namespace softdpu::apsh::source

namespace softdpu::apsh {

Status pause_qemu_guest(const std::string &qmp_socket, bool &was_running)
{
	was_running = false;
	source::QmpSession qmp;
	Status status = qmp.open(qmp_socket);
	std::string reply;
	if (status.ok())
		status = qmp.execute("query-status", &reply);
	if (!status.ok())
		return status;
	auto parsed = nlohmann::json::parse(reply, nullptr, false);
	if (!parsed.is_object() || !parsed.contains("running") || !parsed["running"].is_boolean())
		return source::error_status(DOCA_ERROR_IO_FAILED, "QMP query-status answered " + reply);
	if (!parsed["running"].get<bool>())
		return Status::success();
	status = qmp.execute("stop");
	if (status.ok())
		was_running = true;
	return status;
}

Status resume_qemu_guest(const std::string &qmp_socket)
{
	source::QmpSession qmp;
	Status status = qmp.open(qmp_socket);
	if (status.ok())
		status = qmp.execute("cont");
	return status;
}

} // namespace softdpu::apsh

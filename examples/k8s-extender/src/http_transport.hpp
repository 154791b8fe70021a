// SPDX-License-Identifier: MIT
// The byte streams under the extender's HTTP connections, with the limits cpp-httplib 0.11 lacks.
//
// cpp-httplib 0.11 (Debian 12) reads a chunked body whole whatever set_payload_max_length says,
// and its read timeout is per read(), so a client that sends one byte every few seconds holds a
// worker thread for ever. The server therefore runs each connection over a request_stream that
// enforces, per request, a deadline (from the request's first byte to its last body byte) and a
// byte budget (head plus framed body), and closes the connection when either is hit. The socket
// stream speaks plain TCP or TLS (OpenSSL, non-blocking socket, every wait bounded by the
// deadline, the handshake included); the memory stream feeds given bytes (the HTTP fuzzer and
// socket-free tests). None of these are thread-safe: one connection, one worker thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <httplib.h>
#include <string>
#include <string_view>

#include <hetsched/model/result.hpp>

#include <openssl/ssl.h>

namespace hetsched::k8s {

using steady_time = std::chrono::steady_clock::time_point;

/// Why a stream stopped a request.
enum class stream_cut : unsigned char { none, timed_out, too_large, closed };

/// One connection's byte stream, as cpp-httplib's Server::process_request reads it.
class request_stream : public httplib::Stream {
 public:
  using httplib::Stream::write;
  /// Waits up to `idle` for the first byte of the next request; returns false when none came
  /// (timeout, end of stream, or `give_up()` turned true while waiting).
  virtual bool wait_for_request(std::chrono::milliseconds idle,
                                const std::function<bool()>& give_up) = 0;
  /// Starts a request: its reads must be done by `deadline` and total at most `budget` bytes.
  void begin_request(steady_time deadline, std::size_t budget) {
    deadline_ = deadline;
    budget_ = budget;
    cut_ = stream_cut::none;
  }
  /// Returns why the current request's reads stopped, if they did.
  [[nodiscard]] stream_cut cut() const noexcept { return cut_; }
  /// Asks the serving loop to close the connection after the current response (a body left
  /// unread, a refused request).
  void close_after_response() noexcept { close_ = true; }
  [[nodiscard]] bool closing() const noexcept { return close_ || cut_ != stream_cut::none; }
  /// Returns true if the connection ends with request bytes possibly unread (a refused or
  /// oversized request), which a plain close would answer with a TCP reset.
  [[nodiscard]] bool may_have_unread_input() const noexcept {
    return close_ || cut_ == stream_cut::too_large;
  }
  /// Returns true when the peer presented a client certificate that verified against the
  /// configured client CA (TLS only).
  [[nodiscard]] virtual bool client_verified() const noexcept { return false; }

 protected:
  steady_time deadline_{};
  std::size_t budget_ = 0;
  stream_cut cut_ = stream_cut::none;
  bool close_ = false;
};

/// TLS settings: PEM files as kube-scheduler's tlsConfig pairs them (the server's certificate
/// chain and key; the CA that signs client certificates, optional).
struct tls_files {
  std::string cert_file;
  std::string key_file;
  std::string client_ca_file;
};

/// An OpenSSL server context (TLS 1.2 or later). Movable, not copyable.
class tls_context {
 public:
  /// Returns a context loaded from `files`. With a client CA, clients are asked for a
  /// certificate, which must verify; it is required unless `client_cert_optional` (a bearer
  /// token may stand in). Errors: invalid_argument naming the file and OpenSSL's reason.
  [[nodiscard]] static result<tls_context> create(const tls_files& files,
                                                  bool client_cert_optional);
  tls_context(tls_context&& other) noexcept;
  tls_context& operator=(tls_context&& other) noexcept;
  tls_context(const tls_context&) = delete;
  tls_context& operator=(const tls_context&) = delete;
  ~tls_context();
  [[nodiscard]] SSL_CTX* get() const noexcept { return ctx_; }

 private:
  explicit tls_context(SSL_CTX* ctx) : ctx_(ctx) {}
  SSL_CTX* ctx_ = nullptr;
};

/// A stream over an accepted socket, plain or TLS. The socket is made non-blocking; the stream
/// does not close it.
class socket_stream final : public request_stream {
 public:
  /// `tls` may be null (plain TCP). `write_timeout` bounds each wait for the peer to read.
  socket_stream(socket_t fd, const tls_context* tls, std::chrono::milliseconds write_timeout);
  socket_stream(const socket_stream&) = delete;
  socket_stream& operator=(const socket_stream&) = delete;
  ~socket_stream() override;

  /// Runs the TLS handshake (no-op for plain TCP); false if it fails or misses `deadline`.
  bool handshake(steady_time deadline);
  /// Sends TLS close_notify (best effort).
  void shutdown_tls();

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, std::size_t size) override;
  ssize_t write(const char* ptr, std::size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return fd_; }
  bool wait_for_request(std::chrono::milliseconds idle,
                        const std::function<bool()>& give_up) override;
  [[nodiscard]] bool client_verified() const noexcept override { return verified_; }

 private:
  // Waits until the socket is readable (events = POLLIN) or writable (POLLOUT) or `until`.
  bool wait(short events, steady_time until) const;
  // Reads up to `size` bytes from the socket (or TLS) by the request's deadline; -1 and cut_
  // set on end of stream, error or deadline.
  ssize_t receive(char* ptr, std::size_t size);

  socket_t fd_;
  char buffer_[4096];
  std::size_t buffered_ = 0;  ///< bytes in buffer_
  std::size_t consumed_ = 0;  ///< of those, handed out
  SSL* ssl_ = nullptr;
  std::chrono::milliseconds write_timeout_;
  bool verified_ = false;
};

/// A stream over bytes in memory; what is written is kept. For the fuzzer and socket-free tests.
class memory_stream final : public request_stream {
 public:
  explicit memory_stream(std::string_view input) : input_(input) {}
  bool is_readable() const override { return pos_ < input_.size(); }
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, std::size_t size) override;
  ssize_t write(const char* ptr, std::size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return INVALID_SOCKET; }
  bool wait_for_request(std::chrono::milliseconds idle,
                        const std::function<bool()>& give_up) override;
  /// Returns every byte written so far.
  [[nodiscard]] const std::string& output() const noexcept { return output_; }
  /// Returns how many input bytes were read.
  [[nodiscard]] std::size_t consumed() const noexcept { return pos_; }

 private:
  std::string_view input_;
  std::size_t pos_ = 0;
  std::string output_;
};

}  // namespace hetsched::k8s

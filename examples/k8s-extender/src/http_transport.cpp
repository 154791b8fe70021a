// SPDX-License-Identifier: MIT
// The byte streams under the extender's HTTP connections: deadlines and byte budgets per request.
#include "http_transport.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <utility>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <sys/socket.h>

namespace hetsched::k8s {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

int millis_until(steady_time until) {
  const auto left = std::chrono::duration_cast<milliseconds>(until - steady_clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 1'000'000));
}

std::string openssl_reason() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(code, buf, sizeof buf);
  return buf;
}

void address_of(const sockaddr_storage& addr, std::string& ip, int& port) {
  char host[NI_MAXHOST];
  char serv[NI_MAXSERV];
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&addr), sizeof addr, host, sizeof host, serv,
                  sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
    ip = host;
    port = std::atoi(serv);
  }
}

}  // namespace

result<tls_context> tls_context::create(const tls_files& files, bool client_cert_optional) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) return make_error(errc::internal, "TLS: {}", openssl_reason());
  tls_context out(ctx);
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  if (SSL_CTX_use_certificate_chain_file(ctx, files.cert_file.c_str()) != 1)
    return make_error(errc::invalid_argument, "TLS certificate {}: {}", files.cert_file,
                      openssl_reason());
  if (SSL_CTX_use_PrivateKey_file(ctx, files.key_file.c_str(), SSL_FILETYPE_PEM) != 1)
    return make_error(errc::invalid_argument, "TLS key {} (for certificate {}): {}", files.key_file,
                      files.cert_file, openssl_reason());
  if (SSL_CTX_check_private_key(ctx) != 1)
    return make_error(errc::invalid_argument, "TLS key {} does not match certificate {}: {}",
                      files.key_file, files.cert_file, openssl_reason());
  if (!files.client_ca_file.empty()) {
    if (SSL_CTX_load_verify_locations(ctx, files.client_ca_file.c_str(), nullptr) != 1)
      return make_error(errc::invalid_argument, "client CA {}: {}", files.client_ca_file,
                        openssl_reason());
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(files.client_ca_file.c_str());
    if (names == nullptr)
      return make_error(errc::invalid_argument, "client CA {}: no certificate in it",
                        files.client_ca_file);
    SSL_CTX_set_client_CA_list(ctx, names);
    SSL_CTX_set_verify(
        ctx, SSL_VERIFY_PEER | (client_cert_optional ? 0 : SSL_VERIFY_FAIL_IF_NO_PEER_CERT),
        nullptr);
  }
  return out;
}

tls_context::tls_context(tls_context&& other) noexcept : ctx_(std::exchange(other.ctx_, nullptr)) {}

tls_context& tls_context::operator=(tls_context&& other) noexcept {
  if (this != &other) {
    if (ctx_ != nullptr) SSL_CTX_free(ctx_);
    ctx_ = std::exchange(other.ctx_, nullptr);
  }
  return *this;
}

tls_context::~tls_context() {
  if (ctx_ != nullptr) SSL_CTX_free(ctx_);
}

socket_stream::socket_stream(socket_t fd, const tls_context* tls, milliseconds write_timeout)
    : fd_(fd), write_timeout_(write_timeout) {
  const int flags = fcntl(fd_, F_GETFL, 0);
  if (flags >= 0) (void)fcntl(fd_, F_SETFL, flags | O_NONBLOCK);
  // cpp-httplib writes a response's head and body separately: with Nagle the body would wait
  // for the peer's delayed ACK of the head (tens of ms a request)
  const int one = 1;
  (void)setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (tls != nullptr) {
    ssl_ = SSL_new(tls->get());
    if (ssl_ != nullptr) SSL_set_fd(ssl_, fd_);
  }
}

socket_stream::~socket_stream() {
  if (ssl_ != nullptr) SSL_free(ssl_);
}

bool socket_stream::wait(short events, steady_time until) const {
  pollfd p{fd_, events, 0};
  for (;;) {
    const int n = ::poll(&p, 1, millis_until(until));
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) return false;
  }
}

bool socket_stream::handshake(steady_time deadline) {
  if (ssl_ == nullptr) return true;
  for (;;) {
    ERR_clear_error();
    const int r = SSL_accept(ssl_);
    if (r == 1) break;
    const int e = SSL_get_error(ssl_, r);
    if (e == SSL_ERROR_WANT_READ) {
      if (!wait(POLLIN, deadline)) return false;
    } else if (e == SSL_ERROR_WANT_WRITE) {
      if (!wait(POLLOUT, deadline)) return false;
    } else {
      ERR_clear_error();
      return false;
    }
  }
  X509* peer = SSL_get1_peer_certificate(ssl_);
  verified_ = peer != nullptr && SSL_get_verify_result(ssl_) == X509_V_OK;
  if (peer != nullptr) X509_free(peer);
  return true;
}

void socket_stream::shutdown_tls() {
  if (ssl_ != nullptr) {
    ERR_clear_error();
    (void)SSL_shutdown(ssl_);
    ERR_clear_error();
  }
}

bool socket_stream::is_readable() const {
  if (consumed_ < buffered_) return true;
  if (ssl_ != nullptr && SSL_pending(ssl_) > 0) return true;
  return wait(POLLIN, deadline_);
}

bool socket_stream::is_writable() const {
  return wait(POLLOUT, steady_clock::now() + write_timeout_);
}

ssize_t socket_stream::read(char* ptr, std::size_t size) {
  if (cut_ != stream_cut::none) return -1;
  if (budget_ == 0) {
    cut_ = stream_cut::too_large;
    return -1;
  }
  // cpp-httplib reads the request line and headers one byte a call: serve them from a buffer
  if (buffered_ == consumed_) {
    const ssize_t got = receive(buffer_, sizeof buffer_);
    if (got < 0) return -1;
    buffered_ = static_cast<std::size_t>(got);
    consumed_ = 0;
  }
  const std::size_t n = std::min({size, budget_, buffered_ - consumed_});
  std::memcpy(ptr, buffer_ + consumed_, n);
  consumed_ += n;
  budget_ -= n;
  return static_cast<ssize_t>(n);
}

ssize_t socket_stream::receive(char* ptr, std::size_t size) {
  for (;;) {
    ssize_t n = 0;
    short want = POLLIN;
    if (ssl_ != nullptr) {
      ERR_clear_error();
      const int r = SSL_read(ssl_, ptr, static_cast<int>(std::min<std::size_t>(size, 1 << 30)));
      if (r > 0) {
        n = r;
      } else {
        const int e = SSL_get_error(ssl_, r);
        if (e == SSL_ERROR_WANT_WRITE) {
          want = POLLOUT;
        } else if (e != SSL_ERROR_WANT_READ) {
          ERR_clear_error();
          cut_ = stream_cut::closed;
          return -1;
        }
      }
    } else {
      n = ::recv(fd_, ptr, size, 0);
      if (n == 0) {
        cut_ = stream_cut::closed;
        return -1;
      }
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        cut_ = stream_cut::closed;
        return -1;
      }
    }
    if (n > 0) return n;
    if (!wait(want, deadline_)) {
      cut_ = steady_clock::now() >= deadline_ ? stream_cut::timed_out : stream_cut::closed;
      return -1;
    }
  }
}

ssize_t socket_stream::write(const char* ptr, std::size_t size) {
  const steady_time until = steady_clock::now() + write_timeout_;
  for (;;) {
    short want = POLLOUT;
    if (ssl_ != nullptr) {
      ERR_clear_error();
      const int r = SSL_write(ssl_, ptr, static_cast<int>(std::min<std::size_t>(size, 1 << 30)));
      if (r > 0) return r;
      const int e = SSL_get_error(ssl_, r);
      if (e == SSL_ERROR_WANT_READ) {
        want = POLLIN;
      } else if (e != SSL_ERROR_WANT_WRITE) {
        ERR_clear_error();
        return -1;
      }
    } else {
      const ssize_t n = ::send(fd_, ptr, size, MSG_NOSIGNAL);
      if (n >= 0) return n;
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return -1;
    }
    if (!wait(want, until)) return -1;
  }
}

void socket_stream::get_remote_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (getpeername(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) address_of(addr, ip, port);
}

void socket_stream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) address_of(addr, ip, port);
}

bool socket_stream::wait_for_request(milliseconds idle, const std::function<bool()>& give_up) {
  if (consumed_ < buffered_) return true;  // a pipelined request
  if (ssl_ != nullptr && SSL_pending(ssl_) > 0) return true;
  // Short slices, so that a stopping server or a queue of waiting connections (give_up) takes
  // the thread back from an idle keep-alive connection at once.
  constexpr milliseconds slice{50};
  const steady_time until = steady_clock::now() + idle;
  for (bool first = true;; first = false) {
    // A request already sent is served whatever else waits; only a quiet connection yields.
    const steady_time now = steady_clock::now();
    pollfd p{fd_, POLLIN, 0};
    const int n = ::poll(&p, 1, first ? 0 : millis_until(std::min(until, now + slice)));
    if (n > 0) {
      // A peer that closed is readable too: the request then reads end of stream.
      return (p.revents & (POLLIN | POLLHUP)) != 0;
    }
    if (n < 0 && errno != EINTR) return false;
    if (give_up && give_up()) return false;
    if (steady_clock::now() >= until) return false;
  }
}

ssize_t memory_stream::read(char* ptr, std::size_t size) {
  if (cut_ != stream_cut::none) return -1;
  if (pos_ >= input_.size()) {
    cut_ = stream_cut::closed;
    return -1;
  }
  if (budget_ == 0) {
    cut_ = stream_cut::too_large;
    return -1;
  }
  const std::size_t n = std::min({size, budget_, input_.size() - pos_});
  std::memcpy(ptr, input_.data() + pos_, n);
  pos_ += n;
  budget_ -= n;
  return static_cast<ssize_t>(n);
}

ssize_t memory_stream::write(const char* ptr, std::size_t size) {
  output_.append(ptr, size);
  return static_cast<ssize_t>(size);
}

void memory_stream::get_remote_ip_and_port(std::string& ip, int& port) const {
  ip = "127.0.0.1";
  port = 1;
}

void memory_stream::get_local_ip_and_port(std::string& ip, int& port) const {
  ip = "127.0.0.1";
  port = 2;
}

bool memory_stream::wait_for_request(milliseconds, const std::function<bool()>&) {
  return pos_ < input_.size();
}

}  // namespace hetsched::k8s

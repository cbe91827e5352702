//===- StoreFuzzer.cpp - fuzz the TCP store's request parsing -------------===//
//
// Input: the bytes a client sends to the TCP store's server (one or more
// requests, see the wire format in runtime/lib/Stores.cpp). Each input gets a
// fresh server on 127.0.0.1 (port 0), so no state carries over between
// inputs and the server's destructor ends every connection thread, including
// gets still waiting. The bytes are sent on a raw connection that is then
// half-closed, and the replies are read until the server closes it or
// kReplyWait passes (a get may wait for a key nobody sets). Finally the
// server must still answer a well-formed set and get from a regular client.
//
// The server parses requests straight from its socket, so the target drives
// the server itself rather than a parsing function.
//
//===----------------------------------------------------------------------===//

#include "FuzzCheck.h"

#include "partition/runtime/Stores.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace partition::runtime;
using Clock = std::chrono::steady_clock;

namespace {
/// How long to wait for the server's replies to one input.
constexpr std::chrono::milliseconds kReplyWait(50);

/// A connection to the fresh server on `port`. Loopback can run out of
/// ephemeral ports for a moment (thousands of connections a minute, the
/// test suite's beside the fuzzer's, wait out TIME_WAIT): that is retried
/// for up to two seconds, not reported as a finding; the server's own
/// refusals are not retried.
int connectTo(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int error = 0;
  for (int attempt = 0; attempt < 200; ++attempt) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    FUZZ_CHECK(fd >= 0, "socket");
    if (::connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) == 0)
      return fd;
    error = errno;
    ::close(fd);
    if (error != EADDRNOTAVAIL && error != EAGAIN && error != EINTR)
      break;
    ::usleep(10000);
  }
  std::fprintf(stderr, "cannot connect to the store: %s\n",
               std::strerror(error));
  FUZZ_CHECK(false, "cannot connect to the store");
  return -1;
}

/// Sends `size` bytes, stopping early when the server closes the connection
/// (it may reject a request before reading all of it).
void sendBytes(int fd, const uint8_t *data, size_t size) {
  while (size > 0) {
    ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n <= 0)
      return;
    data += n;
    size -= static_cast<size_t>(n);
  }
}

/// Reads and drops replies until EOF or the deadline.
void drainReplies(int fd, Clock::time_point deadline) {
  char buffer[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - Clock::now());
    if (left.count() <= 0)
      return;
    pollfd pfd{fd, POLLIN, 0};
    if (::poll(&pfd, 1, static_cast<int>(left.count())) <= 0)
      return;
    if (::recv(fd, buffer, sizeof(buffer), 0) <= 0)
      return;
  }
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  StatusOr<std::unique_ptr<TcpStore>> store =
      TcpStore::create("127.0.0.1", 0, /*serve=*/true);
  FUZZ_CHECK(store.isOk(), "cannot start the store");

  int fd = connectTo((*store)->port());
  sendBytes(fd, data, size);
  ::shutdown(fd, SHUT_WR);
  drainReplies(fd, Clock::now() + kReplyWait);
  ::close(fd);

  // Whatever that connection sent, the server still serves others.
  std::vector<char> value = {'o', 'k'};
  FUZZ_CHECK((*store)->set("fuzz/check", value).isOk(),
             "the store refuses a set after the input");
  StatusOr<std::vector<char>> got =
      (*store)->get("fuzz/check", std::chrono::milliseconds(1000));
  FUZZ_CHECK(got.isOk() && *got == value,
             "the store does not return a value after the input");
  return 0;
}

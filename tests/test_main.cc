// Catch2's main, after one line of OpenSSL set-up every test binary needs under LeakSanitizer.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <openssl/crypto.h>

int main(int argc, char** argv) {
  // OpenSSL's default atexit cleanup deletes its thread-local key while gRPC's and cpp-httplib's worker
  // threads may still be exiting: a thread that ends after it never runs its destructor and its error
  // state (~900 bytes) is reported as a leak, at random, under load. Without the atexit handler every
  // exiting thread frees its own state and what is left at exit stays reachable (OpenSSL issue #6214).
  OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, nullptr);
  return Catch::Session().run(argc, argv);
}

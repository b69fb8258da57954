// Sanitizer — SCHEDC_ASAN: defined when built with AddressSanitizer (gcc says so with a
// macro, clang with a feature). Code that manages memory or stacks its own way (fibers'
// stacks, the values' free list) steps aside there, so that AddressSanitizer sees every
// allocation and every stack.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define SCHEDC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SCHEDC_ASAN 1
#endif
#endif

// SCHEDC_TSAN: likewise for ThreadSanitizer (a parallel run's checks: scripts/tsan.sh); fibers
// tell it when they switch (engine/Fiber.cpp).
#if defined(__SANITIZE_THREAD__)
#define SCHEDC_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SCHEDC_TSAN 1
#endif
#endif

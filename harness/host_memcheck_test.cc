// The host executor's memory checks (host_memcheck.h): test-only kernels that
// break one GPU memory rule each, made by one thread of the grid, and the
// message that names it; and legal accesses at every width at the very end
// of an allocation and of shared memory, which must pass.
#include "harness/host_memcheck.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/backend.h"
#include "harness/host_executor.h"
#include "harness/last_block_test_kernel.cuh"
#include "harness/portable_math.h"

namespace nvh {
namespace {

// The message of the MemoryViolation `launch` throws, "" when it throws none.
template <class F>
std::string violation(F&& launch) {
  try {
    launch();
  } catch (const MemoryViolation& e) {
    return e.what();
  }
  return "";
}

std::string hex(const void* p) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx",
                static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(p)));
  return text;
}

void expect_parts(const std::string& message, std::initializer_list<std::string> parts) {
  EXPECT_FALSE(message.empty()) << "no MemoryViolation was thrown";
  for (const std::string& part : parts) {
    EXPECT_NE(message.find(part), std::string::npos)
        << "\"" << part << "\" missing from: " << message;
  }
}

// Two blocks of 4 x 2 threads; thread (1,1,0) of block (1,0,0) makes the bad
// access, so the message must name that thread, not the first or the last.
LaunchShape grid(uint32_t shared_bytes = 0, bool collectives = false) {
  return LaunchShape{{2, 1, 1}, {4, 2, 1}, shared_bytes, collectives};
}
constexpr const char* kCulprit = "thread (1,1,0), block (1,0,0)";
template <class Ctx>
bool culprit(Ctx& ctx) {
  return ctx.block_idx().x == 1 && ctx.thread_idx().x == 1 && ctx.thread_idx().y == 1;
}

struct MisalignedVectorStore {
  struct Params {
    uint8_t* out;
  };
  template <class Ctx>
  static void body(Ctx& ctx, const Params& p) {
    if (culprit(ctx)) store_u32x4(p.out + 8, {1, 2, 3, 4});  // 8-byte aligned, not 16
  }
};

TEST(HostMemcheck, MisalignedVectorStoreIsCaught) {
  auto backend = make_host_backend();
  Buffer out(*backend, 64, "out");
  const std::string m =
      violation([&] { launch_on_host<MisalignedVectorStore>(grid(), {out.as<uint8_t>()}); });
  expect_parts(m, {"kernel nvh::(anonymous namespace)::MisalignedVectorStore", kCulprit,
                   "16-byte store at " + hex(out.as<uint8_t>() + 8), "misaligned",
                   "in allocation \"out\" (base " + hex(out.data()) + ", 64 bytes), offset 8"});
  EXPECT_EQ(m.find("out of bounds"), std::string::npos) << m;
}

struct LoadWord {
  struct Params {
    const uint8_t* at;
  };
  template <class Ctx>
  static void body(Ctx& ctx, const Params& p) {
    if (culprit(ctx)) static_cast<void>(load_u32(p.at));
  }
};

TEST(HostMemcheck, MisalignedWordLoadIsCaught) {
  auto backend = make_host_backend();
  Buffer in(*backend, 64, "in");
  const std::string m =
      violation([&] { launch_on_host<LoadWord>(grid(), {in.as<uint8_t>() + 2}); });
  expect_parts(m, {"LoadWord", kCulprit, "4-byte load at " + hex(in.as<uint8_t>() + 2),
                   "misaligned", "in allocation \"in\"", "offset 2"});
}

TEST(HostMemcheck, ReadOneElementPastAnAllocationIsCaught) {
  auto backend = make_host_backend();
  Buffer in(*backend, 64, "table");  // the backend rounds it to 256 bytes: the check must not
  const std::string m =
      violation([&] { launch_on_host<LoadWord>(grid(), {in.as<uint8_t>() + 64}); });
  expect_parts(
      m, {"LoadWord", kCulprit, "4-byte load at " + hex(in.as<uint8_t>() + 64), "out of bounds",
          "allocation \"table\" (base " + hex(in.data()) +
              ", 64 bytes), offset 64 (4 bytes past its end)"});
  EXPECT_EQ(m.find("misaligned"), std::string::npos) << m;
}

TEST(HostMemcheck, ReadStraddlingTheEndIsCaught) {
  auto backend = make_host_backend();
  Buffer in(*backend, 66, "table");
  const std::string m =
      violation([&] { launch_on_host<LoadWord>(grid(), {in.as<uint8_t>() + 64}); });
  expect_parts(m, {"out of bounds", "offset 64 (2 bytes past its end)"});
}

struct LoadByte {
  struct Params {
    const uint8_t* at;
  };
  template <class Ctx>
  static void body(Ctx& ctx, const Params& p) {
    if (culprit(ctx)) static_cast<void>(load_u8(p.at));
  }
};

TEST(HostMemcheck, ReadOfAGuardByteIsCaughtOnBothSides) {
  auto backend = make_host_backend();
  GuardedBuffer y(*backend, 32, 4, "Y");
  const std::string after =
      violation([&] { launch_on_host<LoadByte>(grid(), {y.as<uint8_t>() + 32}); });
  expect_parts(
      after, {"LoadByte", kCulprit, "1-byte load at " + hex(y.as<uint8_t>() + 32), "out of bounds",
              "in allocation \"Y\" (base " + hex(y.data()) + ", 32 bytes, inside a",
              "offset 32 (1 byte past its end)"});
  const std::string before =
      violation([&] { launch_on_host<LoadByte>(grid(), {y.as<uint8_t>() - 1}); });
  expect_parts(before,
               {"out of bounds", "in allocation \"Y\"", "offset -1 (1 byte before its start)"});
  EXPECT_EQ(y.damaged_guard_bytes(), 0u);
}

TEST(HostMemcheck, ReadOfMemoryNoBackendAllocatedIsCaught) {
  std::vector<uint32_t> host(16);
  const auto* at = reinterpret_cast<const uint8_t*>(host.data());
  const std::string m = violation([&] { launch_on_host<LoadWord>(grid(), {at}); });
  expect_parts(m, {"LoadWord", kCulprit, "4-byte load at " + hex(at), "out of bounds"});
}

TEST(HostMemcheck, ReadOfReleasedMemoryIsCaught) {
  auto backend = make_host_backend();
  // "live" is allocated while "released" still is, so the two never share an
  // address and the stale read is out of bounds on every allocator (a buffer
  // allocated after the release could reuse the address and make it legal).
  Buffer other(*backend, 64, "live");
  const uint8_t* stale = nullptr;
  {
    Buffer in(*backend, 64, "released");
    stale = in.as<uint8_t>();
  }
  const std::string m = violation([&] { launch_on_host<LoadWord>(grid(), {stale}); });
  expect_parts(m, {"out of bounds"});
  EXPECT_EQ(m.find("\"released\""), std::string::npos) << m;
}

// Shared memory: 64 bytes; the culprit reads 16 of them at `offset`.
struct SharedRead {
  struct Params {
    uint32_t offset;
  };
  template <class Ctx>
  static void body(Ctx& ctx, const Params& p) {
    unsigned char* shared = ctx.template shared_mem<unsigned char>();
    if (culprit(ctx)) static_cast<void>(load_generic_u32x4(shared + p.offset));
  }
};

TEST(HostMemcheck, SharedMemoryOverrunIsCaughtInFibersAndPlainLoops) {
  for (const bool fibers : {true, false}) {
    SCOPED_TRACE(fibers ? "fibers" : "plain loop");
    const std::string m = violation([&] { launch_on_host<SharedRead>(grid(64, fibers), {64}); });
    expect_parts(m,
                 {"SharedRead", kCulprit, "16-byte load at", "out of bounds",
                  "allocation \"shared memory\"", "64 bytes), offset 64 (16 bytes past its end)"});
    EXPECT_EQ(violation([&] { launch_on_host<SharedRead>(grid(64, fibers), {48}); }), "");
  }
}

// cp.async: the culprit copies from `src` into shared memory at `dst_offset`
// (or into `global_dst` when set).
struct CopyAsync {
  struct Params {
    const uint8_t* src;
    uint32_t dst_offset, width;
    uint8_t* global_dst;
  };
  template <class Ctx>
  static void body(Ctx& ctx, const Params& p) {
    if (!culprit(ctx)) return;
    uint8_t* dst = p.global_dst ? p.global_dst : ctx.template shared_mem<uint8_t>() + p.dst_offset;
    if (p.width == 16) {
      ctx.cp_async16(dst, p.src);
    } else {
      ctx.cp_async4(dst, p.src);
    }
    ctx.cp_async_commit();
    ctx.template cp_async_wait<0>();
  }
};

TEST(HostMemcheck, AsyncCopyChecksItsSourceAndDestination) {
  auto backend = make_host_backend();
  Buffer src(*backend, 64, "src");
  const uint8_t* s = src.as<uint8_t>();
  expect_parts(
      violation([&] {
        launch_on_host<CopyAsync>(grid(64), {s + 8, 0, 16, nullptr});
      }),
      {"CopyAsync", kCulprit, "16-byte cp.async read at " + hex(s + 8), "misaligned", "\"src\""});
  expect_parts(violation([&] {
                 launch_on_host<CopyAsync>(grid(64), {s + 64, 0, 4, nullptr});
               }),
               {"4-byte cp.async read", "out of bounds", "offset 64 (4 bytes past its end)"});
  expect_parts(
      violation([&] {
        launch_on_host<CopyAsync>(grid(64), {s, 60, 16, nullptr});
      }),
      {"16-byte cp.async write", "misaligned", "out of bounds", "\"shared memory\"", "offset 60"});
  expect_parts(violation([&] {
                 launch_on_host<CopyAsync>(grid(64), {s, 0, 16, src.as<uint8_t>() + 16});
               }),
               {"16-byte cp.async write", "not in shared memory", "\"src\"", "offset 16"});
}

TEST(HostMemcheck, GlobalOnlyLoadOfSharedMemoryIsCaught) {
  struct LoadShared {
    struct Params {};
    static void body(HostCtx& ctx, const Params&) {
      if (culprit(ctx)) static_cast<void>(load_u32(ctx.shared_mem<uint8_t>()));
    }
  };
  expect_parts(violation([&] { launch_on_host<LoadShared>(grid(64), {}); }),
               {"LoadShared", kCulprit, "4-byte load",
                "in shared memory, which a global-only access cannot reach"});
}

// Every width at the last bytes of a 64-byte allocation and of 64 bytes of
// shared memory, through every function of the layer: all legal.
struct EveryWidthAtTheEnd {
  struct Params {
    uint8_t* buf;  // 64 bytes
    uint32_t* sum;
  };
  template <class Ctx>
  static void body(Ctx& ctx, const Params& p) {
    uint8_t* end = p.buf + 64;
    uint8_t* shared_end = ctx.template shared_mem<uint8_t>() + 64;
    uint32_t s = load_u8(end - 1) + load_generic_u8(end - 1) + load_generic_u16(end - 2) +
                 load_u32(end - 4) + load_u32x2(end - 8).y + load_u32x4(end - 16).w +
                 load_generic_u32x4(end - 16).w +
                 float_to_bits(load_generic_f32(reinterpret_cast<float*>(end - 4)));
    ctx.cp_async16(shared_end - 16, end - 16);
    ctx.cp_async4(shared_end - 20, end - 4);
    ctx.cp_async_commit();
    ctx.template cp_async_wait<0>();
    s += load_generic_u32x4(shared_end - 16).w + load_generic_u16(shared_end - 2) +
         load_generic_u8(shared_end - 1);
    store_u8(end - 1, 1);
    store_u16(reinterpret_cast<uint16_t*>(end - 2), 2);
    store_u32(end - 4, 3);
    store_f32(reinterpret_cast<float*>(end - 4), 4.0f);
    store_u32x4(end - 16, {5, 6, 7, 8});
    store_f32(reinterpret_cast<float*>(shared_end - 4), 9.0f);
    store_u32x4(shared_end - 16, {s, 0, 0, 0});
    if (ctx.thread_idx().x == 0) store_u32(p.sum, s);
  }
};

TEST(HostMemcheck, LegalAccessesOfEveryWidthAtTheLastBytesPass) {
  auto backend = make_host_backend();
  Buffer buf(*backend, 64, "buf"), sum(*backend, 4, "sum");
  backend->fill(buf.data(), 0, 64);
  for (const bool fibers : {true, false}) {
    EXPECT_NO_THROW(launch_on_host<EveryWidthAtTheEnd>({{1, 1, 1}, {1, 1, 1}, 64, fibers},
                                                       {buf.as<uint8_t>(), sum.as<uint32_t>()}));
  }
  // The same inside a guarded payload, at an offset off the 256-byte alignment.
  GuardedBuffer guarded(*backend, 64, 48, "guarded");
  backend->fill(guarded.data(), 0, 64);
  EXPECT_NO_THROW(launch_on_host<EveryWidthAtTheEnd>({{1, 1, 1}, {1, 1, 1}, 64, true},
                                                     {guarded.as<uint8_t>(), sum.as<uint32_t>()}));
  EXPECT_EQ(guarded.damaged_guard_bytes(), 0u);
}

// A HostAccessLog counts EveryWidthAtTheEnd's global accesses by kind and
// width, and none of its shared-memory ones, in fibers and in plain loops;
// one at a time; once it is gone a launch counts nowhere and a new log
// starts at zero.
TEST(HostMemcheck, AnAccessLogCountsGlobalAccessesByKindAndWidth) {
  auto backend = make_host_backend();
  Buffer buf(*backend, 64, "buf"), sum(*backend, 4, "sum");
  backend->fill(buf.data(), 0, 64);
  const auto run = [&](bool fibers) {
    launch_on_host<EveryWidthAtTheEnd>({{1, 1, 1}, {1, 1, 1}, 64, fibers},
                                       {buf.as<uint8_t>(), sum.as<uint32_t>()});
  };
  for (const bool fibers : {true, false}) {
    HostAccessLog log;
    EXPECT_THROW(HostAccessLog(), std::logic_error);
    run(fibers);
    using memcheck::Op;
    struct Want {
      Op op;
      uint32_t width;
      uint64_t count;
    };
    const Want wants[] = {
        // Loads: u8 and generic u8; generic u16; u32 and generic f32; u32x2;
        // u32x4 and generic u32x4 (the three generic loads of shared memory uncounted).
        {Op::load, 1, 2},
        {Op::load, 2, 1},
        {Op::load, 4, 2},
        {Op::load, 8, 1},
        {Op::load, 16, 2},
        // The cp.asyncs' global sources; their shared destinations uncounted.
        {Op::cp_async_read, 16, 1},
        {Op::cp_async_read, 4, 1},
        {Op::cp_async_write, 16, 0},
        // Stores: u8, u16, u32, f32 and the sum's u32, u32x4 (two of shared uncounted).
        {Op::store, 1, 1},
        {Op::store, 2, 1},
        {Op::store, 4, 3},
        {Op::store, 8, 0},
        {Op::store, 16, 1},
        {Op::store, 3, 0},  // no such width
    };
    for (const Want& w : wants) {
      EXPECT_EQ(log.global(w.op, w.width), w.count)
          << "op " << static_cast<int>(w.op) << ", " << w.width << " bytes, "
          << (fibers ? "fibers" : "plain loops");
    }
  }
  run(true);  // unlogged
  HostAccessLog later;
  EXPECT_EQ(later.global(memcheck::Op::load, 16), 0u);
}

// Reads a word of global memory, having waited for the grid before it
// first unless `late`: then the culprit reads before it waits.
struct ReadAfterPriorGrid {
  struct Params {
    const uint32_t* in;
    uint32_t* out;
    bool late;
  };
  template <class Ctx>
  static void body(Ctx& ctx, const Params& p) {
    const bool late = p.late && culprit(ctx);
    if (!late) ctx.wait_prior_grid();
    const uint32_t v = load_u32(p.in);
    if (late) ctx.wait_prior_grid();
    if (culprit(ctx)) store_u32(p.out, v);
  }
};

TEST(HostMemcheck, GlobalAccessBeforeWaitingForThePriorGridIsCaughtInFibersAndPlainLoops) {
  auto backend = make_host_backend();
  Buffer in(*backend, 4, "in"), out(*backend, 4, "out");
  backend->fill(in.data(), 7, 4);
  for (bool collectives : {false, true}) {
    LaunchShape overlapping = grid(16, collectives);
    overlapping.overlaps_prior_grid = true;
    const ReadAfterPriorGrid::Params late{in.as<uint32_t>(), out.as<uint32_t>(), true};
    expect_parts(violation([&] { launch_on_host<ReadAfterPriorGrid>(overlapping, late); }),
                 {kCulprit, "4-byte load at " + hex(in.data()),
                  "before the thread's wait_prior_grid()", "in allocation \"in\""});
    // Waiting first is legal; so is any order in a launch that overlaps nothing.
    const ReadAfterPriorGrid::Params waits{in.as<uint32_t>(), out.as<uint32_t>(), false};
    EXPECT_NO_THROW(launch_on_host<ReadAfterPriorGrid>(overlapping, waits));
    EXPECT_NO_THROW(launch_on_host<ReadAfterPriorGrid>(grid(16, collectives), late));
  }
}

// A grid that lets the launch after it start early: every thread reads
// word 16 + t of `in` and writes word t of `out` (16 threads: bytes 64..127
// of `in` read, 0..63 of `out` written). Every thread calls
// launch_dependents() first, or (`trigger`) only each block's thread 0 does,
// or block 1's threads call it only after their store, or every thread
// first copies its word into shared memory by cp.async (a global read: legal
// before the trigger) and then calls it.
enum class Trigger : uint8_t { every_thread_first, thread0_first, block1_after_store, copy_first };
struct CopyWords {
  struct Params {
    const uint32_t* in;
    uint32_t* out;
    Trigger trigger = Trigger::every_thread_first;
  };
  template <class Ctx>
  static void body(Ctx& ctx, const Params& p) {
    const uint32_t x = ctx.thread_idx().x, y = ctx.thread_idx().y, b = ctx.block_idx().x;
    const uint32_t t = y * 4 + x + 8 * b;
    if (p.trigger == Trigger::copy_first) {
      uint32_t* word = ctx.template shared_mem<uint32_t>() + y * 4 + x;
      ctx.cp_async4(word, p.in + 16 + t);
      ctx.cp_async_commit();
      ctx.template cp_async_wait<0>();
      ctx.launch_dependents();
      store_u32(p.out + t, load_generic_u32(word) + 1);
      return;
    }
    const bool late = p.trigger == Trigger::block1_after_store && b == 1;
    if (!late && (p.trigger != Trigger::thread0_first || (x == 0 && y == 0)))
      ctx.launch_dependents();
    store_u32(p.out + t, load_u32(p.in + 16 + t) + 1);
    if (late) ctx.launch_dependents();
  }
};

// The launch after it, independent of it: before its wait the culprit reads
// `read_at` and writes `write_at` (either null: not made), then every
// thread waits unless `skip_wait` (the culprit alone then exits without).
struct BeforeTheWait {
  struct Params {
    const uint32_t* read_at;
    uint32_t* write_at;
    bool skip_wait;
  };
  template <class Ctx>
  static void body(Ctx& ctx, const Params& p) {
    if (culprit(ctx)) {
      if (p.read_at) load_u32(p.read_at);
      if (p.write_at) store_u32(p.write_at, 5);
    }
    if (!(p.skip_wait && culprit(ctx))) ctx.wait_prior_grid();
  }
};

// independent_of_prior_grid: before its wait a thread may touch what the
// grid before left alone, and only that; it waits before it exits. The
// grid before recorded what it touched (lets_dependents_overlap); one that
// did not leaves the plain rule (nothing before the wait).
TEST(HostMemcheck, ALaunchIndependentOfTheGridBeforeTouchesOnlyWhatThatGridLeftAlone) {
  auto backend = make_host_backend();
  Buffer in(*backend, 256, "in"), out(*backend, 128, "out"), other(*backend, 64, "other");
  backend->fill(in.data(), 7, 256);
  const auto run = [&](bool collectives, bool records, const BeforeTheWait::Params& after) {
    LaunchShape first = grid(0, collectives);
    first.lets_dependents_overlap = records;
    launch_on_host<CopyWords>(first, {in.as<uint32_t>(), out.as<uint32_t>()});
    LaunchShape second = grid(0, collectives);
    second.overlaps_prior_grid = true;
    second.independent_of_prior_grid = true;
    launch_on_host<BeforeTheWait>(second, after);
  };
  uint32_t* const word3 = out.as<uint32_t>() + 3;
  for (bool collectives : {false, true}) {
    // Legal: read bytes the grid before only read, write bytes it never
    // touched (in "in" too, before and after those it read).
    EXPECT_NO_THROW(run(collectives, true, {in.as<uint32_t>() + 20, other.as<uint32_t>(), false}));
    EXPECT_NO_THROW(run(collectives, true, {nullptr, in.as<uint32_t>() + 3, false}));
    EXPECT_NO_THROW(run(collectives, true, {nullptr, in.as<uint32_t>() + 40, false}));
    // Read what it wrote; write what it read.
    expect_parts(violation([&] {
                   run(collectives, true, {word3, nullptr, false});
                 }),
                 {kCulprit, "4-byte load at " + hex(word3), "before the thread's wait_prior_grid()",
                  "independent of the grid before it, which writes these bytes", "\"out\""});
    expect_parts(
        violation([&] {
          run(collectives, true, {nullptr, in.as<uint32_t>() + 31, false});
        }),
        {kCulprit, "4-byte store at " + hex(in.as<uint32_t>() + 31), "which reads these bytes"});
    // Past the 16 words the grid before touched, "out" is free to write.
    EXPECT_NO_THROW(run(collectives, true, {nullptr, out.as<uint32_t>() + 16, false}));
    // An exit without the wait.
    expect_parts(violation([&] {
                   run(collectives, true, {nullptr, nullptr, true});
                 }),
                 {kCulprit, "exits before its wait_prior_grid()", "BeforeTheWait"});
    // The grid before recorded nothing: the plain rule.
    expect_parts(violation([&] {
                   run(collectives, false, {in.as<uint32_t>(), nullptr, false});
                 }),
                 {kCulprit, "in a launch that overlaps the grid before it"});
  }
  // The grid that lets the launch after it start early triggers before its
  // stores: the block's first call counts for all its threads; a block that
  // stores first fails (whether or not a launch after it is independent).
  for (bool collectives : {false, true}) {
    LaunchShape first = grid(0, collectives);
    first.lets_dependents_overlap = true;
    EXPECT_NO_THROW(launch_on_host<CopyWords>(
        first, {in.as<uint32_t>(), out.as<uint32_t>(), Trigger::thread0_first}));
    expect_parts(violation([&] {
                   launch_on_host<CopyWords>(
                       first, {in.as<uint32_t>(), out.as<uint32_t>(), Trigger::block1_after_store});
                 }),
                 {"thread (0,0,0), block (1,0,0)", "4-byte store at " + hex(out.as<uint32_t>() + 8),
                  "before any thread of its block has called launch_dependents()",
                  "(lets_dependents_overlap)", "\"out\""});
    if (collectives) {  // cp.async: a global read, which the rule leaves alone
      LaunchShape copying = grid(64, true);
      copying.lets_dependents_overlap = true;
      EXPECT_NO_THROW(launch_on_host<CopyWords>(
          copying, {in.as<uint32_t>(), out.as<uint32_t>(), Trigger::copy_first}));
    }
    first.lets_dependents_overlap = false;  // no overlap declared: a late trigger is no fault
    EXPECT_NO_THROW(launch_on_host<CopyWords>(
        first, {in.as<uint32_t>(), out.as<uint32_t>(), Trigger::block1_after_store}));
  }
  LaunchShape alone = grid();
  alone.independent_of_prior_grid = true;
  try {
    launch_on_host<BeforeTheWait>(alone, {nullptr, nullptr, false});
    ADD_FAILURE() << "no std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("independent_of_prior_grid qualifies overlaps_prior_grid"),
              std::string::npos)
        << e.what();
  }
}

// The footprint records an access only where it lies inside one
// allocation (one past an allocation's end is the bounds check's to fail,
// after the order rules have looked at it): none of a straddling store's
// bytes then counts as written.
TEST(HostMemcheck, AGridsFootprintLeavesOutAnAccessPastItsAllocation) {
  std::vector<unsigned char> memory(256);
  const auto base = reinterpret_cast<uintptr_t>(memory.data());
  auto regions =
      std::make_shared<memcheck::Regions>(memcheck::Regions{{base, 128, base, base + 128, "a"}});
  memcheck::GridFootprint footprint(regions);
  footprint.record(base + 126, 4, memcheck::Op::store);  // 2 bytes past the end
  EXPECT_EQ(footprint.conflict(base + 124, 4, memcheck::Op::load), "");
  footprint.record(base + 120, 4, memcheck::Op::store);
  EXPECT_EQ(footprint.conflict(base + 122, 2, memcheck::Op::load), "writes");
  footprint.record(base + 64, 8, memcheck::Op::load);
  EXPECT_EQ(footprint.conflict(base + 68, 4, memcheck::Op::load), "");
  EXPECT_EQ(footprint.conflict(base + 68, 4, memcheck::Op::store), "reads");
  EXPECT_EQ(footprint.conflict(base + 72, 4, memcheck::Op::store), "");
  // An access across a 64-byte word of the map (a misaligned one, recorded
  // before the alignment check fails it) sets and finds bits in both words.
  memcheck::GridFootprint across(regions);
  across.record(base + 60, 8, memcheck::Op::store);
  EXPECT_EQ(across.conflict(base + 56, 4, memcheck::Op::load), "");
  EXPECT_EQ(across.conflict(base + 59, 2, memcheck::Op::load), "writes");
  EXPECT_EQ(across.conflict(base + 66, 2, memcheck::Op::load), "writes");
  EXPECT_EQ(across.conflict(base + 68, 4, memcheck::Op::load), "");
}

// cp.async's completion (CpAsyncShadow): 64 threads (two warps) each copy 4
// bytes into shared memory and read a neighbour's (or their own) copy, with
// one step of the legal order left out or kept, by `order`.
enum class CopyOrder : uint8_t {
  legal,             // copy, commit, wait, block barrier, read the next thread's
  read_before_wait,  // read its own copy before the wait
  wait_one_too_few,  // two groups, wait<1>, read the newer group's copy
  uncommitted,       // wait<0> without committing: no group is retired
  no_barrier,        // thread 6 reads thread 5's landed copy, no barrier between
  warp_barrier,      // the same with a sync_warp between (legal within the warp)
  other_warp,        // thread 37 reads thread 5's copy after a sync_warp only
  write_in_flight,   // a store into its own copy still in flight
};
struct CopyThenRead {
  struct Params {
    const uint32_t* src;
    uint32_t* out;
    CopyOrder order;
  };
  template <class Ctx>
  static void body(Ctx& ctx, const Params& p) {
    const uint32_t t = ctx.thread_idx().x;
    uint32_t* slots = ctx.template shared_mem<uint32_t>();
    ctx.cp_async4(slots + t, p.src + t);
    switch (p.order) {
      case CopyOrder::legal:
        ctx.cp_async_commit();
        ctx.template cp_async_wait<0>();
        ctx.sync_threads();
        store_u32(p.out + t, load_generic_u32(slots + (t + 1) % 64));
        return;
      case CopyOrder::read_before_wait:
        ctx.cp_async_commit();
        store_u32(p.out + t, load_generic_u32(slots + t));
        ctx.template cp_async_wait<0>();
        return;
      case CopyOrder::wait_one_too_few:
        ctx.cp_async_commit();
        ctx.cp_async4(slots + 64 + t, p.src + t);
        ctx.cp_async_commit();
        ctx.template cp_async_wait<1>();
        store_u32(p.out + t, load_generic_u32(slots + t));  // the first group's: landed
        store_u32(p.out + t, load_generic_u32(slots + 64 + t));
        return;
      case CopyOrder::uncommitted:
        ctx.template cp_async_wait<0>();
        store_u32(p.out + t, load_generic_u32(slots + t));
        return;
      case CopyOrder::no_barrier:
      case CopyOrder::warp_barrier:
      case CopyOrder::other_warp:
        ctx.cp_async_commit();
        ctx.template cp_async_wait<0>();
        if (p.order != CopyOrder::no_barrier) ctx.sync_warp();
        if (t == (p.order == CopyOrder::other_warp ? 37u : 6u)) {
          store_u32(p.out + t, load_generic_u32(slots + 5));
        }
        return;
      case CopyOrder::write_in_flight:
        store_u32(slots + t, 1u);
        return;
    }
  }
};

TEST(HostMemcheck, ACopyReadBeforeItsWaitOrBarrierIsCaught) {
  auto backend = make_host_backend();
  Buffer src(*backend, 64 * 4, "src"), out(*backend, 64 * 4, "out");
  backend->fill(src.data(), 3, 64 * 4);
  const LaunchShape block{{1, 1, 1}, {64, 1, 1}, 2 * 64 * 4, true};
  const auto run = [&](CopyOrder order) {
    return violation([&] {
      launch_on_host<CopyThenRead>(block, {src.as<uint32_t>(), out.as<uint32_t>(), order});
    });
  };
  EXPECT_EQ(run(CopyOrder::legal), "");
  EXPECT_EQ(run(CopyOrder::warp_barrier), "");
  expect_parts(run(CopyOrder::read_before_wait),
               {"CopyThenRead", "thread (0,0,0)", "4-byte load at",
                "a read of thread 0's cp.async into shared offset 0, still in flight",
                "no cp_async_wait of that thread has retired its group"});
  expect_parts(run(CopyOrder::wait_one_too_few),
               {"a read of thread 0's cp.async into shared offset 256, still in flight"});
  expect_parts(run(CopyOrder::uncommitted), {"shared offset 0, still in flight"});
  expect_parts(run(CopyOrder::no_barrier),
               {"thread (6,0,0)", "a read of thread 5's cp.async into shared offset 20",
                "with no barrier since the wait that retired it"});
  expect_parts(run(CopyOrder::other_warp),
               {"thread (37,0,0)", "from another warp with only a sync_warp of the writer's warp"});
  expect_parts(run(CopyOrder::write_in_flight),
               {"4-byte store at",
                "a write into shared offset 0, the destination of thread 0's "
                "cp.async still in flight"});
}

using test_kernels::LastBlockSums;
using test_kernels::SkipFence;

// The mbarrier hand-over's clocks (ReleaseClocks): an arrive publishes the
// thread's epoch and moves it on, a wait acquires what the phase gathered,
// through other threads too, and a barrier shares all and moves every epoch
// on. Off, nothing has been seen and every epoch is 1.
TEST(HostMemcheck, ReleaseClocksOrderWaitersAfterArrivalsTransitively) {
  memcheck::ReleaseClocks clocks;
  clocks.reset(4);
  EXPECT_FALSE(clocks.on());
  EXPECT_EQ(clocks.epoch(2), 1u);
  EXPECT_EQ(clocks.seen(1, 0), 0u);
  clocks.start();
  std::vector<uint32_t> full, relay;
  clocks.release(0, full);  // thread 0 arrives at epoch 1: what it landed before is in
  EXPECT_EQ(clocks.epoch(0), 2u);
  clocks.acquire(1, full);  // thread 1 waits on that phase
  EXPECT_EQ(clocks.seen(1, 0), 1u);
  EXPECT_EQ(clocks.seen(2, 0), 0u);  // thread 2 did not wait
  clocks.release(1, relay);          // thread 1 hands on; thread 2 waits on that
  clocks.acquire(2, relay);
  EXPECT_EQ(clocks.seen(2, 0), 1u);  // ordered after thread 0's arrive through thread 1
  EXPECT_EQ(clocks.seen(3, 0), 0u);
  clocks.join(2, 2);  // a barrier of threads 2 and 3
  EXPECT_EQ(clocks.seen(3, 0), 1u);
  EXPECT_EQ(clocks.seen(3, 1), 1u);
  EXPECT_EQ(clocks.epoch(3), 2u);  // what thread 3 lands after the barrier is new
  EXPECT_EQ(clocks.seen(2, 3), 1u);
}

// A clock source (the TMA's copies on one mbarrier): released by its
// phase, seen by the threads that acquire that phase and by those ordered
// after them, ordered after nothing itself; a second source widens every
// clock and keeps what each thread had seen. TmaShadow on top: a box is in
// flight until it lands, then visible to the threads ordered after its
// source's epoch, and to all after a barrier only if some thread was.
TEST(HostMemcheck, TmaCopiesAreSeenThroughTheirPhaseOnly) {
  memcheck::ReleaseClocks clocks;
  clocks.reset(3);
  clocks.start();
  memcheck::TmaShadow tma;
  tma.reset(128, 3, clocks);
  std::vector<uint32_t> granules;
  EXPECT_EQ(tma.issued(0, 32, 32, 96, granules), "");
  EXPECT_EQ(granules, (std::vector<uint32_t>{2, 3}));
  EXPECT_NE(tma.read_hazard(40, 4, 0).find("before the phase"), std::string::npos);
  EXPECT_NE(tma.issued(0, 48, 16, 96, granules).find("while another one into it"),
            std::string::npos);
  const uint32_t first = clocks.add_source();
  EXPECT_EQ(first, 3u);  // past the threads
  std::vector<uint32_t> phase;
  const uint32_t landed = clocks.release_source(first, phase);
  tma.landed(granules, first, landed);
  clocks.acquire(0, phase);  // thread 0 waits on the phase
  EXPECT_EQ(tma.read_hazard(40, 4, 0), "");
  EXPECT_NE(tma.read_hazard(40, 4, 1).find("not ordered after the phase"), std::string::npos);
  EXPECT_NE(tma.group_hazard(32, 16, 0, 2).find("thread 1"), std::string::npos);
  EXPECT_NE(tma.write_hazard(40, 4, 1).find("a write of shared offset 32"), std::string::npos);
  const uint32_t second = clocks.add_source();  // widens every clock
  EXPECT_EQ(second, 4u);
  EXPECT_TRUE(clocks.ordered_after(0, first, landed)) << "lost across the widening";
  EXPECT_FALSE(clocks.ordered_after(0, second, 1));
  std::vector<uint32_t> relay;
  clocks.release(0, relay);  // thread 0 hands on to thread 1
  clocks.acquire(1, relay);
  EXPECT_EQ(tma.read_hazard(40, 4, 1), "");
  EXPECT_FALSE(tma.quiet());
  tma.barrier();  // thread 0 had seen it: now every thread has
  EXPECT_TRUE(tma.quiet());
  EXPECT_EQ(tma.read_hazard(40, 4, 2), "");
  granules.clear();
  EXPECT_EQ(tma.issued(0, 64, 16, 104, granules), "");
  tma.landed(granules, second, clocks.release_source(second, phase));
  tma.barrier();  // nobody waited on it: the barrier shares nothing
  EXPECT_NE(tma.read_hazard(64, 4, 2).find("not ordered after"), std::string::npos);
  clocks.acquire(2, phase);  // thread 2 waits on that phase and writes over the box
  EXPECT_EQ(tma.write_hazard(64, 16, 2), "");
  EXPECT_TRUE(tma.quiet()) << "the generic write's now";
}

// A TMA copy over bytes another thread read: only once the issuing thread
// is ordered after that read, by an mbarrier phase the reader arrived on
// after reading (a pipeline's "slot free") or by a block barrier; a
// thread's own reads never stop it, and reads before the clocks are on are
// not recorded (no copy can come before an mbarrier).
TEST(HostMemcheck, ATmaCopyComesAfterTheReadsOfWhatItOverwrites) {
  memcheck::ReleaseClocks clocks;
  clocks.reset(3);
  memcheck::TmaShadow tma;
  tma.reset(128, 3, clocks);
  tma.read_by(0, 16, 1);  // clocks off: not recorded
  clocks.start();
  std::vector<uint32_t> granules;
  EXPECT_EQ(tma.issued(0, 0, 16, 96, granules), "");
  tma.read_by(32, 4, 1);
  tma.read_by(32, 4, 0);
  const std::string why = tma.issued(0, 32, 16, 96, granules);
  EXPECT_NE(why.find("shared offset 32 that thread 1 read"), std::string::npos) << why;
  std::vector<uint32_t> slot_free;
  clocks.release(1, slot_free);  // thread 1 frees the slot after its read
  clocks.acquire(0, slot_free);  // thread 0 waits for that before the copy
  EXPECT_EQ(tma.issued(0, 32, 16, 96, granules), "");
  tma.read_by(64, 16, 2);
  EXPECT_NE(tma.issued(0, 64, 16, 104, granules).find("thread 2 read"), std::string::npos);
  tma.barrier();
  EXPECT_EQ(tma.issued(0, 64, 16, 104, granules), "");
}

// A warpgroup's wgmma read (threads 2 and 3 here), retired in a wait: a
// copy over it needs its thread in that group or ordered after one of the
// group's threads past that wait (an arrive after it, not one before).
TEST(HostMemcheck, ATmaCopyComesAfterTheWgmmaReadsItOverwrites) {
  memcheck::ReleaseClocks clocks;
  clocks.reset(4);
  clocks.start();
  memcheck::TmaShadow tma;
  tma.reset(128, 4, clocks);
  std::vector<uint32_t> early;
  clocks.release(3, early);  // thread 3 frees the slot before the wait: too early
  const uint32_t retired = tma.group_snapshot({clocks.epoch(2), clocks.epoch(3)});
  tma.group_read_by(32, 16, 2, retired);
  clocks.acquire(0, early);
  std::vector<uint32_t> granules;
  const std::string why = tma.issued(0, 32, 16, 96, granules);
  EXPECT_NE(why.find("the wgmmas of warpgroup 1"), std::string::npos) << why;
  std::vector<uint32_t> after;
  clocks.release(3, after);  // after the wait
  clocks.acquire(0, after);
  EXPECT_EQ(tma.issued(0, 32, 16, 96, granules), "");
  tma.group_read_by(64, 16, 2, tma.group_snapshot({clocks.epoch(2), clocks.epoch(3)}));
  EXPECT_EQ(tma.issued(2, 64, 16, 104, granules), "") << "the group's own thread";
}

// The race shadow alone (SharedRaceShadow), threads 0..63 (warps 0 and 1):
// an access after another thread's write, or a write after its read, needs
// the thread ordered after it by a sync_warp of their warp, an mbarrier
// phase, or a block barrier; several lanes' reads need a sync_warp after
// the latest; a TMA box checks the writes it covers and clears its bytes.
TEST(HostMemcheck, SharedRaceShadowOrdersAccessesByBarriersSyncWarpsAndPhases) {
  memcheck::ReleaseClocks clocks;
  clocks.reset(64);
  memcheck::SharedRaceShadow race;
  race.reset(64, 64, clocks);
  const auto says = [](const std::string& why, const std::string& part) {
    EXPECT_NE(why.find(part), std::string::npos) << "\"" << part << "\" missing from: " << why;
  };
  EXPECT_EQ(race.write(0, 4, 0), "");
  EXPECT_EQ(race.read(0, 4, 0), "") << "a thread's own write";
  says(race.read(2, 2, 33),
       "a race on shared offset 2 (read after write): thread 0 wrote it, "
       "and thread 33 is not ordered after that");
  says(race.read(0, 4, 1), "thread 0 wrote it");  // the same warp, no sync_warp since
  race.warp_synced(0);
  EXPECT_EQ(race.read(0, 4, 1), "");
  says(race.write(0, 4, 2), "(write after read): thread 1 read it");
  race.barrier();
  EXPECT_EQ(race.write(0, 4, 40), "");  // after the barrier: none of it counts
  says(race.write(0, 1, 41), "(write after write): thread 40 wrote it");
  // Lanes 0..3 read; lane 3, the latest, writes: the other lanes' reads race.
  race.barrier();
  for (uint32_t lane = 0; lane < 4; ++lane) EXPECT_EQ(race.read(8, 4, lane), "");
  says(race.write(8, 4, 3), "(write after read): thread 0 read it");
  race.warp_synced(0);
  EXPECT_EQ(race.write(8, 4, 3), "");
  EXPECT_EQ(race.read(12, 4, 0), "");  // lane 0 reads first and last, lane 1 between
  EXPECT_EQ(race.read(12, 4, 1), "");
  EXPECT_EQ(race.read(12, 4, 0), "");
  says(race.write(12, 4, 0), "(write after read): other lanes of warp 0 read it");
  // Two warps read; a write from either needs the other's read ordered.
  race.barrier();
  EXPECT_EQ(race.read(16, 4, 5), "");
  EXPECT_EQ(race.read(16, 4, 37), "");
  says(race.write(16, 4, 5), "thread 37 read it");
  // Through mbarrier phases: thread 0 writes and arrives, thread 40 waits.
  race.barrier();
  clocks.start();
  EXPECT_EQ(race.write(24, 4, 0), "");
  std::vector<uint32_t> full;
  clocks.release(0, full);
  says(race.read(24, 4, 41), "thread 0 wrote it");  // thread 41 did not wait
  clocks.acquire(40, full);
  EXPECT_EQ(race.read(24, 4, 40), "");
  std::vector<uint32_t> empty;  // thread 40 frees the slot after reading; thread 0 waits
  says(race.write(24, 4, 0), "thread 40 read it");
  clocks.release(40, empty);
  clocks.acquire(0, empty);
  EXPECT_EQ(race.write(24, 4, 0), "");
  // A TMA box over another thread's write: only once ordered after it.
  race.barrier();
  EXPECT_EQ(race.write(32, 16, 5), "");
  says(race.copied_over(32, 32, 40), "(a TMA copy after a write): thread 5 wrote it");
  EXPECT_EQ(race.copied_over(32, 32, 5), "");
  EXPECT_EQ(race.read(32, 16, 40), "") << "the box's bytes: TmaShadow's to order";
}

// The executor holds every kernel to it: a block of two warps passes a word
// through shared memory. Warp 0 runs first on the host, so each racy order
// below gave the right answer there before the race shadow; on the GPU the
// warps run at once.
enum class HandOff : uint8_t {
  barrier,           // legal: a block barrier between the write and the read
  warp_sync,         // legal: writer and reader in warp 0, a sync_warp between
  mbarrier,          // legal: the writer arrives, the reader waits on the phase
  other_warp,        // warp 0 writes, warp 1 reads: no barrier
  same_warp,         // lane 0 writes, lane 1 reads: no sync_warp
  read_then_write,   // warp 0 reads, warp 1 writes over it: no barrier
  write_then_write,  // warp 0 writes, warp 1 writes: no barrier
};
struct SharedHandOff {
  struct Params {
    uint32_t* out;
    HandOff order;
  };
  template <class Ctx>
  static void body(Ctx& ctx, const Params& p) {
    const uint32_t t = ctx.thread_idx().x;
    uint32_t* word = ctx.template shared_mem<uint32_t>();
    const auto write = [&] { store_u32(word, 7u + t); };
    const auto read = [&] { store_u32(p.out, load_generic_u32(word)); };
    switch (p.order) {
      case HandOff::barrier:
        if (t == 0) write();
        ctx.sync_threads();
        if (t == 32) read();
        return;
      case HandOff::warp_sync:
        if (t == 0) write();
        if (t < 32) ctx.sync_warp();
        if (t == 1) read();
        return;
      case HandOff::mbarrier: {
        uint64_t* bar = reinterpret_cast<uint64_t*>(word + 2);
        if (t == 0) ctx.mbarrier_init(bar, 1);
        ctx.sync_threads();
        if (t == 0) {
          write();
          ctx.mbarrier_arrive(bar);
        }
        if (t == 32) {
          ctx.mbarrier_wait(bar, 0);
          read();
        }
        return;
      }
      case HandOff::other_warp:
        if (t == 0) write();
        if (t == 32) read();
        return;
      case HandOff::same_warp:
        if (t == 0) write();
        if (t == 1) read();
        return;
      case HandOff::read_then_write:
        if (t == 0) read();
        if (t == 32) write();
        return;
      case HandOff::write_then_write:
        if (t == 0 || t == 32) write();
        return;
    }
  }
};

TEST(HostMemcheck, ASharedMemoryRaceBetweenThreadsIsCaught) {
  auto backend = make_host_backend();
  Buffer out(*backend, 4, "out");
  const LaunchShape block{{1, 1, 1}, {64, 1, 1}, 16, true};
  const auto run = [&](HandOff order) {
    return violation([&] { launch_on_host<SharedHandOff>(block, {out.as<uint32_t>(), order}); });
  };
  for (HandOff legal : {HandOff::barrier, HandOff::warp_sync, HandOff::mbarrier}) {
    EXPECT_EQ(run(legal), "");
    uint32_t got = 0;
    backend->copy_out(&got, out.data(), 4);
    EXPECT_EQ(got, 7u);
  }
  expect_parts(run(HandOff::other_warp),
               {"SharedHandOff", "thread (32,0,0)", "4-byte load at",
                "a race on shared offset 0 (read after write): thread 0 wrote it, and thread 32 "
                "is not ordered after that"});
  expect_parts(run(HandOff::same_warp), {"thread (1,0,0)", "thread 0 wrote it"});
  expect_parts(run(HandOff::read_then_write),
               {"thread (32,0,0)", "4-byte store at", "(write after read): thread 0 read it"});
  expect_parts(run(HandOff::write_then_write),
               {"thread (32,0,0)", "(write after write): thread 0 wrote it"});
  // A block without collectives runs as a plain loop: nothing orders its threads.
  const LaunchShape plain{{1, 1, 1}, {64, 1, 1}, 16, false};
  expect_parts(violation([&] {
                 launch_on_host<SharedHandOff>(plain, {out.as<uint32_t>(), HandOff::other_warp});
               }),
               {"thread (32,0,0)", "(read after write): thread 0 wrote it"});
}

// A plain store over a tile another warpgroup's wgmmas read: warpgroup 0
// multiplies with the 8-column tile, thread 128 (warpgroup 1) then stores
// over it. On the GPU the warpgroups run at once, so the store needs an
// order after warpgroup 0's wgmma_wait. On the host warpgroup 0 retires its
// wgmma before thread 128 gets past a phase it arrived on early, and before
// TmaShadow::store_hazard no rule saw that race.
enum class StoreOverTile : uint8_t {
  barrier,             // legal: a block barrier after warpgroup 0's wait
  arrive_after_wait,   // legal: warpgroup 0 arrives after its wait, thread 128 waits on the phase
  own_warpgroup,       // legal: thread 5 stores after its own warpgroup's wait
  arrive_before_wait,  // warpgroup 0 arrives before its wait: the phase orders nothing after it
  no_order,            // thread 128 stores with no order at all
};
struct WgmmaTileThenStore {
  struct Params {
    float* out;
    StoreOverTile order;
  };
  template <class Ctx>
  static void body(Ctx& ctx, const Params& p) {
    const uint32_t t = ctx.thread_idx().x;
    const auto base = reinterpret_cast<uintptr_t>(ctx.template shared_mem<uint8_t>());
    uint8_t* tile = reinterpret_cast<uint8_t*>((base + 1023) / 1024 * 1024);  // 8 rows of 128 bytes
    auto* bar = reinterpret_cast<uint64_t*>(tile + 1024);
    if (t == 0) ctx.mbarrier_init(bar, 128);
    for (uint32_t at = 4 * t; at < 1024; at += 4 * 256) store_u32(tile + at, 0);
    ctx.fence_proxy_async();
    ctx.sync_threads();  // the tile's zeros, to the async proxy; the init
    const bool handed =
        p.order == StoreOverTile::arrive_after_wait || p.order == StoreOverTile::arrive_before_wait;
    if (t < 128) {
      float acc[4] = {};
      const uint32_t a[4] = {0, 0, 0, 0};
      ctx.wgmma_fence();
      ctx.template wgmma_m64k16<8>(acc, a, tile, HalfKind::bf16);
      ctx.wgmma_commit();
      if (p.order == StoreOverTile::arrive_before_wait) ctx.mbarrier_arrive(bar);
      ctx.template wgmma_wait<0>();
      if (p.order == StoreOverTile::arrive_after_wait) ctx.mbarrier_arrive(bar);
      if (p.order == StoreOverTile::own_warpgroup && t == 5) store_u32(tile, 1);
      store_f32(p.out + t, acc[0]);
    }
    if (p.order == StoreOverTile::barrier) ctx.sync_threads();
    if (t == 128 && p.order != StoreOverTile::own_warpgroup) {
      if (handed) ctx.mbarrier_wait(bar, 0);
      store_u32(tile, 1);
    }
  }
};

TEST(HostMemcheck, AStoreOverAnotherWarpgroupsWgmmaTileIsOrderedAfterItsWait) {
  auto backend = make_host_backend();
  Buffer out(*backend, 128 * 4, "out");
  LaunchShape block{{1, 1, 1}, {256, 1, 1}, 1024 + 8 + 1024, true};
  block.reads_shared_async = true;
  const auto run = [&](StoreOverTile order) {
    return violation([&] { launch_on_host<WgmmaTileThenStore>(block, {out.as<float>(), order}); });
  };
  for (StoreOverTile legal :
       {StoreOverTile::barrier, StoreOverTile::arrive_after_wait, StoreOverTile::own_warpgroup}) {
    EXPECT_EQ(run(legal), "") << int(legal);
  }
  expect_parts(run(StoreOverTile::arrive_before_wait),
               {"WgmmaTileThenStore", "thread (128,0,0)", "4-byte store at",
                "that the wgmmas of warpgroup 0 (retired by its wgmma_wait) read, and the storing "
                "thread is not ordered after that read"});
  // With no order at all the host runs thread 128 while the wgmma is in
  // flight, and the wgmma rules catch the same race from the reader's side.
  expect_parts(run(StoreOverTile::no_order),
               {"wgmma 0 of warpgroup 0: the shared memory it reads (B[0][0]) was written before "
                "the wgmma_wait that retires it"});
}

// The async proxy's view of a handed-over write, alone: thread 0 writes a
// granule without a fence and arrives; a fence counts for the readers
// ordered after it only if its thread was ordered after the write (thread
// 1, which did not wait on the phase, fences in vain); a thread that waited
// and fenced hands the write on to the threads ordered after its fence.
TEST(HostMemcheck, AsyncProxySeesAHandedOverWriteOnlyThroughAnOrderedFence) {
  memcheck::ReleaseClocks clocks;
  clocks.reset(4);
  clocks.start();
  memcheck::AsyncProxyShadow proxy;
  proxy.reset(64, 4, clocks);
  proxy.written(16, 4, 0);
  std::vector<uint32_t> full, relay1, relay2;
  clocks.release(0, full);
  proxy.released_by({true, false, false, false});  // the phase completes
  EXPECT_TRUE(proxy.pending_for(16, 16, 1, 1).released);
  proxy.fenced(1);  // thread 1 never waited on the phase
  clocks.release(1, relay1);
  clocks.acquire(3, relay1);  // thread 3 is ordered after thread 1's fence, not after the write
  EXPECT_TRUE(proxy.pending_for(16, 16, 3, 1).released) << "a fence not ordered after the write";
  clocks.acquire(2, full);  // thread 2 waits on the phase, fences, hands on to thread 3
  proxy.fenced(2);
  EXPECT_EQ(proxy.pending_for(16, 16, 2, 1).writer_plus_1, 0u);  // its own fence
  const memcheck::AsyncProxyShadow::Pending before = proxy.pending_for(16, 16, 3, 1);
  EXPECT_TRUE(before.fenced);
  EXPECT_EQ(before.fencer, 2u);
  EXPECT_EQ(before.reader, 3u);
  clocks.release(2, relay2);
  clocks.acquire(3, relay2);
  EXPECT_EQ(proxy.pending_for(16, 16, 3, 1).writer_plus_1, 0u);
  EXPECT_TRUE(proxy.pending_for(16, 16, 0, 4).fenced);  // threads 0 and 1 are not ordered after it
  proxy.barrier();
  EXPECT_EQ(proxy.pending_for(16, 16, 0, 4).writer_plus_1, 0u);
  // A block barrier orders every thread after what a completed phase handed
  // over: thread 1's fence after it counts, though thread 1 never waited.
  std::vector<uint32_t> again;
  proxy.written(32, 4, 0);
  clocks.release(0, again);
  proxy.released_by({true, false, false, false});
  proxy.barrier();
  EXPECT_TRUE(proxy.pending_for(32, 16, 1, 1).released);  // a barrier is no fence
  proxy.fenced(1);
  EXPECT_EQ(proxy.pending_for(32, 16, 1, 1).writer_plus_1, 0u);
}

TEST(HostMemcheck, AStoreNotFencedBeforeTheBlocksAtomicIsCaught) {
  auto backend = make_host_backend();
  Buffer parts(*backend, 2 * 8 * 4, "parts"), out(*backend, 8 * 4, "out");
  const uint32_t* counter = backend->zeroed_counters(1);
  const float* culprit_part = parts.as<float>() + 8 + 5;  // block 1, thread (1,1,0)
  expect_parts(violation([&] {
                 launch_on_host<LastBlockSums>(grid(16, true),
                                               {parts.as<float>(), backend->zeroed_counters(1),
                                                out.as<float>(), SkipFence::writer});
               }),
               {"thread (0,0,0), block (1,0,0): 4-byte atomic at " + hex(counter),
                "while thread (1,1,0) of the block has a 4-byte store at " + hex(culprit_part) +
                    " (\"parts\")",
                "no fence_global() of that thread follows", "allocation \"zeroed counters\""});
}

TEST(HostMemcheck, AReadAfterTheBlocksAtomicBeforeItsFenceIsCaught) {
  auto backend = make_host_backend();
  Buffer parts(*backend, 2 * 8 * 4, "parts"), out(*backend, 8 * 4, "out");
  const uint32_t* counter = backend->zeroed_counters(1);
  expect_parts(violation([&] {
                 launch_on_host<LastBlockSums>(grid(16, true),
                                               {parts.as<float>(), backend->zeroed_counters(1),
                                                out.as<float>(), SkipFence::reader});
               }),
               {"4-byte load at", "after the block's global atomic at " + hex(counter),
                "before any fence_global() of the block after it", "allocation \"parts\""});
}

// Without collectives each thread counts itself in after its own store.
struct StoreThenCount {
  struct Params {
    uint32_t* stored;
    uint32_t* counter;
    bool fence;
  };
  template <class Ctx>
  static void body(Ctx& ctx, const Params& p) {
    store_u32(p.stored + ctx.thread_idx().x, 1);
    if (p.fence || !culprit(ctx)) ctx.fence_global();
    ctx.atomic_inc_global(p.counter, ~0u);
  }
};

TEST(HostMemcheck, AThreadsOwnUnfencedStoreIsCaughtInPlainLoops) {
  auto backend = make_host_backend();
  Buffer stored(*backend, 4 * 4, "stored"), counter(*backend, 4, "count");
  backend->fill(counter.data(), 0, 4);
  expect_parts(violation([&] {
                 launch_on_host<StoreThenCount>(
                     grid(), {stored.as<uint32_t>(), counter.as<uint32_t>(), false});
               }),
               {kCulprit, "while thread (1,1,0) of the block has a 4-byte store at " +
                              hex(stored.as<uint32_t>() + 1)});
  backend->fill(counter.data(), 0, 4);
  EXPECT_NO_THROW(launch_on_host<StoreThenCount>(
      grid(), {stored.as<uint32_t>(), counter.as<uint32_t>(), true}));
  EXPECT_EQ(counter.download_as<uint32_t>(1)[0], 16u);  // atom.inc below its wrap adds one
}

TEST(HostMemcheck, ZeroedCountersLeftNonZeroAreNamed) {
  auto backend = make_host_backend();
  uint32_t* c = backend->zeroed_counters(4);
  EXPECT_EQ(backend->zeroed_counters(2), c);  // fewer: the same ones
  c[2] = 7;                                   // as a kernel that never wrapped would leave it
  try {
    backend->zeroed_counters(4);
    ADD_FAILURE() << "no error for a counter left at 7";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("counter 2 of 4 holds 7"), std::string::npos) << e.what();
  }
  uint32_t* more = backend->zeroed_counters(9);  // more: a new zeroed allocation
  for (int i = 0; i < 9; ++i) EXPECT_EQ(more[i], 0u);
}

TEST(HostMemcheck, TheWorkspaceIsKeptUntilMoreIsAskedAndIsNamed) {
  auto backend = make_host_backend();
  auto* w = static_cast<uint8_t*>(backend->workspace(96));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(w) % 256, 0u);
  EXPECT_EQ(backend->workspace(40), w);  // fewer bytes: the same memory
  const std::string m = violation([&] { launch_on_host<LoadWord>(grid(), {w + 96}); });
  expect_parts(m,
               {"out of bounds", "allocation \"workspace\"", "offset 96 (4 bytes past its end)"});
  auto* larger = static_cast<uint8_t*>(backend->workspace(4096));
  EXPECT_NO_THROW(launch_on_host<LoadWord>(grid(), {larger + 4092}));
  const std::string stale = violation([&] { launch_on_host<LoadWord>(grid(), {larger + 4096}); });
  expect_parts(stale, {"allocation \"workspace\"", "offset 4096"});
}

TEST(HostMemcheck, NothingIsCheckedOutsideALaunch) {
  std::vector<uint8_t> host(32, 1);  // not backend memory, and read misaligned
  EXPECT_EQ(load_u32(host.data() + 1), 0x01010101u);
  store_u32x4(host.data() + 8, {0, 0, 0, 0});
  EXPECT_EQ(load_u8(host.data() + 8), 0u);
}

TEST(HostMemcheck, DescribeAllocationRejectsWhatItCannotDescribe) {
  auto backend = make_host_backend();
  Buffer buf(*backend, 64);
  int not_allocated = 0;
  EXPECT_THROW(memcheck::describe_allocation(&not_allocated, 0, 4, "x"), std::invalid_argument);
  try {
    memcheck::describe_allocation(buf.data(), 60, 8, "x");
    FAIL() << "a range past the end was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "memcheck::describe_allocation: offset = 60, bytes = 8: past the end of the 64-byte "
              "allocation");
  }
}

}  // namespace
}  // namespace nvh

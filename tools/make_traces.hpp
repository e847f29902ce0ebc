#pragma once
// Generators of the traces shipped in benchmarks/replay/traces/ (docs/replay.md). Each runs a synthetic but realistic
// allocation pattern through alloy::RecordingAllocator over a real parent and returns the recorded CSV text.
// Deterministic: a fixed xorshift64* seed, integer arithmetic only, and a helper thread that runs in lock-step with
// the main one, so the same text comes out on every run (tests/replay_traces.cpp checks the shipped files).
#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <alloy/aligned_mallocator.hpp>
#include <alloy/mallocator.hpp>
#include <alloy/recording_allocator.hpp>

#include "../tests/support/rng.hpp"

namespace alloy::traces {

/// xorshift64* (docs/workloads.md), seed 0x9E3779B97F4A7C15: the tests' generator (the traces were made with it).
using Rng = alloy::test::Rng;

/// A second thread that runs one task at a time while the caller waits: its calls land in the trace with their own
/// thread number, at a deterministic position.
class LockStepThread {
 public:
  LockStepThread() : t_([this] { loop(); }) {}
  LockStepThread(const LockStepThread&) = delete;
  LockStepThread& operator=(const LockStepThread&) = delete;
  ~LockStepThread() {
    run({});
    t_.join();
  }
  /// Runs f on the thread and waits for it; an empty f stops the thread.
  void run(std::function<void()> f) {
    std::unique_lock l(m_);
    task_ = std::move(f);
    stop_ = !task_;
    pending_ = true;
    cv_.notify_all();
    cv_.wait(l, [&] { return !pending_; });
  }

 private:
  void loop() {
    for (;;) {
      std::unique_lock l(m_);
      cv_.wait(l, [&] { return pending_; });
      if (stop_) {
        pending_ = false;
        cv_.notify_all();
        return;
      }
      task_();
      pending_ = false;
      cv_.notify_all();
    }
  }
  std::mutex m_;
  std::condition_variable cv_;
  std::function<void()> task_;
  bool pending_ = false, stop_ = false;
  std::thread t_;
};

/// Trace 1: activations of a layered inference run (a ResNet-18-like CNN in fp16, 64x64 inputs, dynamic batch).
/// Startup: weights and biases of every layer and one persistent 4 MiB workspace, 256-byte aligned (as a GPU runtime
/// asks), all long-lived. Then 96 batches of 1, 2, 4 or 8 images: a loader thread (thread 1) allocates the input
/// tensor and a small request record; the main thread (thread 0) runs the stem, 8 residual blocks (2 convolutions
/// each; the first block of a stage has a projection shortcut), each convolution with a scratch buffer of an
/// algorithm-dependent size allocated and freed around it; output activations are allocated per layer and the
/// previous layer's input is freed as soon as nothing needs it (the block input lives until the residual add).
/// Head: pooled features, logits, probabilities. At shutdown the weights and the workspace are freed.
inline std::string make_inference_trace() {
  RecordingAllocator<AlignedMallocator> rec;
  Rng rng;
  constexpr std::size_t al = 256, fp16 = 2;
  auto alloc = [&](std::size_t n) {
    const Block b = rec.aligned_allocate(n, al);
    if (!b) std::abort();
    return b;
  };
  auto act = [](std::size_t batch, std::size_t c, std::size_t hw) { return batch * c * hw * hw * fp16; };

  struct Conv {
    std::size_t cin, cout, k, hw_out, algo;  // algo picks the scratch size factor (an im2col-like workspace)
    Block w, bias;
  };
  std::vector<Conv> convs;
  convs.push_back({3, 32, 3, 32, 0, {}, {}});  // stem: 64x64 -> 32x32
  std::size_t c = 32, hw = 32;
  for (std::size_t stage = 0; stage < 4; ++stage) {
    const std::size_t cout = stage == 0 ? 32 : c * 2, hw_out = stage == 0 ? hw : hw / 2;
    for (std::size_t blk = 0; blk < 2; ++blk) {
      convs.push_back({blk == 0 ? c : cout, cout, 3, hw_out, 0, {}, {}});
      convs.push_back({cout, cout, 3, hw_out, 0, {}, {}});
      if (blk == 0 && stage != 0) convs.push_back({c, cout, 1, hw_out, 0, {}, {}});  // projection shortcut
    }
    c = cout;
    hw = hw_out;
  }
  for (Conv& cv : convs) {
    cv.algo = rng.below(4);
    cv.w = alloc(cv.cin * cv.cout * cv.k * cv.k * fp16);
    cv.bias = alloc(cv.cout * 4);
  }
  const Block fc_w = alloc(c * 1000 * fp16), fc_b = alloc(1000 * 4);
  const Block workspace = alloc(std::size_t{4} << 20);

  LockStepThread loader;
  std::size_t ci = 0;
  auto conv = [&](const Conv& cv, std::size_t batch) {  // the output activation; scratch allocated and freed inside
    const Block out = alloc(act(batch, cv.cout, cv.hw_out));
    if (cv.algo != 0) {
      const std::size_t scratch = act(batch, cv.cin, cv.hw_out) * cv.k * cv.k / (cv.algo == 1 ? 1 : cv.algo * 2);
      rec.deallocate(alloc(scratch));
    }
    return out;
  };
  for (std::size_t batch_no = 0; batch_no < 96; ++batch_no) {
    const std::size_t batch = std::size_t{1} << rng.below(4);
    Block input, request;
    loader.run([&] {
      request = alloc(64 + 32 * batch);
      input = alloc(act(batch, 3, 64));
    });
    ci = 0;
    Block x = conv(convs[ci++], batch);
    rec.deallocate(input);
    for (std::size_t stage = 0; stage < 4; ++stage) {
      for (std::size_t blk = 0; blk < 2; ++blk) {
        const Block y1 = conv(convs[ci++], batch);
        const Block y2 = conv(convs[ci++], batch);
        rec.deallocate(y1);
        if (blk == 0 && stage != 0) {
          const Block proj = conv(convs[ci++], batch);
          rec.deallocate(x);  // block input consumed by the projection
          rec.deallocate(proj);  // added into y2
        } else {
          rec.deallocate(x);  // residual add into y2
        }
        x = y2;
      }
    }
    const Block pooled = alloc(batch * c * fp16);
    rec.deallocate(x);
    const Block logits = alloc(batch * 1000 * 4);
    rec.deallocate(pooled);
    const Block probs = alloc(batch * 1000 * 4);
    rec.deallocate(logits);
    const Block topk = alloc(batch * 5 * 8);
    rec.deallocate(probs);
    loader.run([&] {  // the loader sends the answer and retires the request
      rec.deallocate(topk);
      rec.deallocate(request);
    });
  }
  for (Conv& cv : convs) {
    rec.deallocate(cv.w);
    rec.deallocate(cv.bias);
  }
  rec.deallocate(fc_w);
  rec.deallocate(fc_b);
  rec.deallocate(workspace);
  return rec.trace();
}

/// Trace 2: a string-heavy host workload: a log-aggregation pass over 3200 records.
/// Strings behave like libstdc++'s std::string: up to 15 characters live inline (no allocation); longer ones take
/// capacity + 1 bytes and grow by doubling through reallocate. Each record is built by appends (growth), split into
/// 4-19 tokens whose lengths follow a skewed vocabulary (60% inline, 30% 16-40, 9% 41-200, 1% 201-2000 bytes), and
/// each token is counted in a chained hash map: a miss allocates a 48-byte node plus a copy of a long key; the bucket
/// array (8 bytes a bucket) doubles and is rehashed when the load factor passes 1. Past 3000 entries the oldest
/// entry is evicted (node and key freed). Every 40 records a JSON summary string is built by appends and freed.
inline std::string make_strings_trace() {
  RecordingAllocator<Mallocator> rec;
  Rng rng;
  constexpr std::size_t sso = 15;

  struct Str {
    Block b;
    std::size_t len = 0, cap = sso;
  };
  auto append = [&](Str& s, std::size_t n) {
    const std::size_t len = s.len + n;
    if (len > s.cap) {
      const std::size_t cap = std::max(len, 2 * s.cap);
      if (!rec.reallocate(s.b, cap + 1)) std::abort();  // from inline storage this is an allocation
      s.cap = cap;
    }
    s.len = len;
  };
  auto make = [&](std::size_t len) {
    Str s;
    if (len > sso) {
      s.b = rec.allocate(len + 1);
      if (!s.b) std::abort();
      s.cap = len;
    }
    s.len = len;
    return s;
  };
  auto destroy = [&](Str& s) {
    if (s.b) rec.deallocate(s.b);
    s = Str{};
  };

  // Vocabulary: word lengths drawn once, skewed.
  constexpr std::size_t vocab = 12000;
  std::vector<std::size_t> word_len(vocab);
  for (std::size_t& l : word_len) {
    const std::size_t u = rng.below(100);
    l = u < 60 ? 1 + rng.below(15) : u < 90 ? 16 + rng.below(25) : u < 99 ? 41 + rng.below(160) : 201 + rng.below(1800);
  }
  auto draw_word = [&] { return rng.below(1 + rng.below(vocab)); };  // rank-skewed: small ranks are frequent

  struct Entry {
    std::size_t word;
    Block node;
    Str key;
    std::size_t born;
  };
  std::vector<Entry> entries;  // in insertion order: the front is the oldest
  std::vector<long> index(vocab, -1);  // word -> position in entries (the simulation's own lookup, not traced)
  std::size_t buckets = 16, size = 0, evicted = 0;
  Block bucket_array = rec.allocate(buckets * 8);

  for (std::size_t record = 0; record < 3200; ++record) {
    const std::size_t tokens = 4 + rng.below(16);
    std::vector<std::size_t> words(tokens);
    Str line;
    for (std::size_t& w : words) {
      w = draw_word();
      append(line, word_len[w] + 1);  // the record text grows as it is read
    }
    for (std::size_t w : words) {
      Str tok = make(word_len[w]);  // substr: a temporary token
      if (index[w] < 0 || static_cast<std::size_t>(index[w]) < evicted) {
        Entry e{w, rec.allocate(48), make(word_len[w]), record};
        index[w] = static_cast<long>(entries.size());
        entries.push_back(e);
        if (++size > buckets) {  // rehash into twice the buckets
          const Block nb = rec.allocate(buckets * 2 * 8);
          rec.deallocate(bucket_array);
          bucket_array = nb;
          buckets *= 2;
        }
        if (size > 3000) {  // evict the oldest entry
          Entry& old = entries[evicted++];
          rec.deallocate(old.node);
          destroy(old.key);
          index[old.word] = -1;
          --size;
        }
      }
      destroy(tok);
    }
    destroy(line);
    if (record % 40 == 39) {  // a JSON summary of the recent records, built by appends
      Str json;
      for (std::size_t i = 0; i < 60; ++i) append(json, 8 + word_len[draw_word()] % 64);
      destroy(json);
    }
  }
  for (std::size_t i = evicted; i < entries.size(); ++i) {
    rec.deallocate(entries[i].node);
    destroy(entries[i].key);
  }
  rec.deallocate(bucket_array);
  return rec.trace();
}

}  // namespace alloy::traces

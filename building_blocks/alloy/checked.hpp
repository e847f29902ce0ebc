#pragma once
/// \file alloy/checked.hpp
/// Checked: a debug layer over any host allocator, reporting misuse in words (issue 23; docs/checked.md).
///
/// Each block gets a header before it (its size and a canary) and guard bytes after it, and a table on the side
/// remembers every block handed out and every block given back, with the call sites. Double free, wrong-size free,
/// foreign block, buffer overrun and underrun, and leaks at destruction are reported through a policy: by default
/// printed to stderr, then abort (as foonathan/memory's debug checks and mimalloc's MI_DEBUG do); `RecordViolations`
/// keeps them for a test to assert on.
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>
#include <alloy/common.hpp>
#include <alloy/detail/source_location.hpp>

namespace alloy {

/// The call site Checked records: std::source_location where the standard library has it (clang 14 over libstdc++
/// 12 lacks it), else the same interface over __builtin_FILE, __builtin_LINE and __builtin_FUNCTION.
using source_location = detail::source_location;

/// What Checked found.
enum class CheckedViolation : std::uint8_t { double_free, wrong_size_free, foreign_block, overrun, underrun, leak };

/// One violation: its kind, the block, the call sites, and the message a person reads.
struct CheckedReport {
  CheckedViolation kind{};
  const void* block = nullptr;     ///< the address the faulty call passed (or the leaked block's)
  std::size_t size = 0;            ///< the size recorded when the block was allocated (0 if it never was)
  std::size_t given_size = 0;      ///< the size the faulty call passed
  source_location allocated_at{};  ///< where the block was allocated (empty when it never was)
  source_location freed_at{};      ///< where it was freed before (double free)
  source_location call_at{};       ///< the faulty call (empty for a leak: found by the destructor)
  bool more_follow = false;        ///< more reports of the same scan follow (leaks at destruction, check())
  char message[768] = {};
};

/// The default policy: print the message to stderr and abort (after the last report of a scan, so that every
/// leak is listed first).
struct AbortOnViolation {
  void operator()(const CheckedReport& r) const noexcept {
    std::fputs(r.message, stderr);
    std::fputc('\n', stderr);
    std::fflush(stderr);
    if (!r.more_follow) std::abort();
  }
};

/// The test policy: keeps every report; Checked goes on (see "Failure" in Checked's docs).
struct RecordViolations {
  std::vector<CheckedReport> reports;
  void operator()(const CheckedReport& r) noexcept {
    try {
      reports.push_back(r);
    } catch (...) {  // out of memory while recording: the report is lost, never the program
    }
  }
  std::size_t count(CheckedViolation k) const noexcept {
    std::size_t c = 0;
    for (const CheckedReport& r : reports) c += r.kind == k;
    return c;
  }
};

namespace detail {
inline constexpr std::size_t checked_guard = 16;              // guard bytes after every block
inline constexpr unsigned char checked_guard_byte = 0xFB;     // their value
inline constexpr std::uint64_t checked_canary = 0xC0DECAFE5AFEB10Cull;  // xor the block's address: the header's last word

struct CheckedHeader {
  std::size_t whole;    // the parent's block size
  std::size_t offset;   // payload - the parent's block start
  std::size_t size;     // the payload size
  std::uint64_t canary; // checked_canary ^ payload address; last, so an underrun hits it first
};

inline const char* short_file(const char* f) noexcept {
  if (f == nullptr || *f == '\0') return "?";
  const char* s = std::strrchr(f, '/');
  return s ? s + 1 : f;
}

// Appends " <what> at file:line (function)"; for an unknown place " <what> at an unknown place", or nothing when
// `what` is empty.
inline void append_site(char* buf, std::size_t cap, std::size_t& len, const char* what, const source_location& s) noexcept {
  if (len >= cap) return;
  int k = 0;
  const char* sep = what[0] != '\0' ? " " : "";
  if (s.line() != 0)
    k = std::snprintf(buf + len, cap - len, " %s%sat %s:%u (%s)", what, sep, short_file(s.file_name()),
                      static_cast<unsigned>(s.line()), s.function_name());
  else if (what[0] != '\0')
    k = std::snprintf(buf + len, cap - len, " %s at an unknown place", what);
  if (k > 0) len += static_cast<std::size_t>(k);
  if (len >= cap) len = cap - 1;
}
inline void append_text(char* buf, std::size_t cap, std::size_t& len, const char* fmt, ...) noexcept
    __attribute__((format(printf, 4, 5)));
inline void append_text(char* buf, std::size_t cap, std::size_t& len, const char* fmt, ...) noexcept {
  if (len >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  const int k = std::vsnprintf(buf + len, cap - len, fmt, ap);
  va_end(ap);
  if (k > 0) len += static_cast<std::size_t>(k);
  if (len >= cap) len = cap - 1;
}
}  // namespace detail

/// Checked<A, Policy = AbortOnViolation>
///
/// Semantics: A, with every block checked. A request of n bytes asks A for a header, the n bytes and 16 guard bytes
/// (`round_up(32, alignment) + n + 16`); the header (the sizes and a canary keyed to the address) sits just before
/// the payload and the guard bytes start at its first byte past the end, so a write one byte too far is seen. A
/// table on the host heap (std::malloc, beside A) maps every address handed out to its size and the call site of
/// its allocate, and keeps the call site of its deallocate once freed (until the address is handed out again).
/// Every primitive takes a trailing `source_location` that defaults to the caller's line.
/// Reports, each naming the block (address, size) and the calls (file:line (function)): **double free** (a block
/// freed again: where it was allocated and first freed), **wrong-size free** (deallocate given another size than
/// allocate returned), **foreign block** (an address this allocator did not hand out; if it points into a live
/// block, which one), **buffer overrun** (guard bytes after the block changed), **buffer underrun** (the header
/// before it changed), found when the block is freed, expanded, reallocated, by `check()`, and at destruction;
/// **leak** (blocks still live when the Checked is destroyed, one report each; they are then given back to A).
/// Capabilities: allocate; owns, empty (from the table: exact, whatever A answers); deallocate iff A has deallocate;
/// reallocate iff A has deallocate (always moves to a fresh block, so stale pointers to the old one stay wrong
/// for tools such as ASan); aligned_allocate iff A has it, aligned_reallocate iff A has aligned_allocate and
/// deallocate; expand iff A has expand; deallocate_all iff A has deallocate_all (checks every live block first).
/// Not declared: allocate_all, allocate_fresh, resolve_internal_pointer, the stream-ordered pair, instance.
/// Alignment: A's. Memory space: host only; A must be host-accessible (the header and guard bytes are written
/// into A's memory): over device memory it does not compile, and the message names the alternative.
/// Thread safety: none (one table): guard a shared Checked with a lock.
/// Failure: an empty Block when n is 0, when the size with header and guard overflows, when A refuses, or when the
/// table cannot grow. After a report under a policy that returns (RecordViolations), Checked does the safe thing:
/// a double or foreign free does not reach A and returns false; a wrong-size or overrun free gives A the block it
/// really handed out and returns false; an expand or reallocate of a block that is not live, of another size, or
/// damaged returns false and leaves it alone.
/// Policy: AbortOnViolation (print, abort), RecordViolations (keep the reports), any noexcept callable taking a
/// `const CheckedReport&`; an lvalue reference (`Checked<A, RecordViolations&>`) refers to one that outlives the
/// Checked, so its destructor's leak reports can be read.
/// Example:
/// ```cpp
/// #include <alloy/mallocator.hpp>
/// alloy::Checked<alloy::Mallocator, alloy::RecordViolations> a;
/// alloy::Block b = a.allocate(24);
/// static_cast<char*>(b.ptr)[24] = 'x';                    // one byte past the end
/// CHECK_FALSE(a.deallocate(b));                           // freed all the same, and reported
/// CHECK(a.policy().count(alloy::CheckedViolation::overrun) == 1);
/// CHECK(std::strstr(a.policy().reports[0].message, "buffer overrun") != nullptr);
/// CHECK_FALSE(a.deallocate(b));                           // the second free never reaches Mallocator
/// CHECK(a.policy().count(alloy::CheckedViolation::double_free) == 1);
/// ```
template <class A, class Policy = AbortOnViolation>
class Checked {
  static_assert(allocator<A>,
                "alloy::Checked: A must be an alloy allocator (a type with `static constexpr std::size_t alignment` "
                "and `Block allocate(std::size_t) noexcept`, e.g. alloy::Mallocator); a std allocator, a "
                "std::pmr::memory_resource or a type whose allocate returns void* is not one");
  static_assert(host_accessible<A>,
                "alloy::Checked writes a header and guard bytes into the memory the parent hands out, so the parent "
                "must be host-accessible; for device memory run the checks on the device side (compute-sanitizer "
                "--tool memcheck finds leaks and out-of-bounds accesses) or count blocks with alloy::StatsCollector");
  using PolicyType = std::remove_reference_t<Policy>;
  static constexpr bool policy_by_reference = std::is_lvalue_reference_v<Policy>;
  static_assert(std::is_nothrow_invocable_v<PolicyType&, const CheckedReport&>,
                "alloy::Checked: the Policy must be callable as policy(const CheckedReport&) noexcept");

  using Header = detail::CheckedHeader;
  static constexpr std::size_t G = detail::checked_guard;

 public:
  static constexpr std::size_t alignment = A::alignment;
  static constexpr MemorySpace memory_space = memory_space_of<A>();
  using parent_type = A;

  Checked() = default;
  /// A Policy that is an lvalue reference (`Checked<A, RecordViolations&>`) refers to a policy object that must
  /// outlive the Checked: a test then sees the leaks its destructor reports.
  explicit Checked(A parent, Policy policy = PolicyType{}) noexcept(std::is_nothrow_move_constructible_v<A> &&
                                                                   std::is_nothrow_move_constructible_v<PolicyType>)
      : parent_(std::move(parent)), policy_(hold(policy)) {}
  Checked(const Checked&) = delete;
  Checked& operator=(const Checked&) = delete;

  /// Reports every block still live as a leak (and any damage to it), gives them back to A, frees the table.
  ~Checked() {
    std::size_t left = live_;
    for (std::size_t i = 0; i < cap_ && left != 0; ++i) {
      Entry& e = table_[i];
      if (e.state != State::live) continue;
      --left;
      check_guards(e, {}, "~Checked", true);  // the leak report follows
      report_leak(e, left != 0);
      give_back(e);
    }
    std::free(table_);
  }

  Block allocate(std::size_t n, source_location at = source_location::current()) noexcept {
    return allocate_at(n, A::alignment, at);
  }

  Block aligned_allocate(std::size_t n, std::size_t a, source_location at = source_location::current()) noexcept
    requires has_aligned_allocate<A>
  {
    if (!is_power_of_two(a)) return {};
    return allocate_at(n, a, at);
  }

  bool deallocate(Block b, source_location at = source_location::current()) noexcept
    requires has_deallocate<A>
  {
    if (!b) return true;
    Entry* e = live_entry(b, at, "deallocate");
    if (e == nullptr) return false;
    const bool right_size = e->size == b.size;
    if (!right_size) report_wrong_size(*e, b, at);
    const bool intact = check_guards(*e, at, "deallocate", false);
    e->state = State::freed;
    e->freed_at = at;
    --live_;
    ++freed_;
    return parent_.deallocate(whole_of(*e)) && right_size && intact;
  }

  bool expand(Block& b, std::size_t delta, source_location at = source_location::current()) noexcept
    requires has_expand<A>
  {
    if (delta == 0) return true;
    if (!b) return false;
    Entry* e = live_entry(b, at, "expand");
    if (e == nullptr) return false;
    if (e->size != b.size) return report_wrong_size(*e, b, at), false;
    if (!check_guards(*e, at, "expand", false)) return false;
    std::size_t n = 0, total = 0;
    if (!add_checked(b.size, delta, n) || !add_checked(n, e->offset + G, total)) return false;
    Block w = whole_of(*e);
    if (!parent_.expand(w, delta)) return false;
    e->size = n;
    header(*e) = expected_header(*e);
    b.size = n;
    write_guard(b);
    return true;
  }

  bool reallocate(Block& b, std::size_t n, source_location at = source_location::current()) noexcept
    requires has_deallocate<A>
  {
    return move_to(b, n, A::alignment, at);
  }

  bool aligned_reallocate(Block& b, std::size_t n, std::size_t a, source_location at = source_location::current()) noexcept
    requires(has_aligned_allocate<A> && has_deallocate<A>)
  {
    if (!is_power_of_two(a)) return false;
    return move_to(b, n, a, at);
  }

  /// Yes iff b is a live block of this allocator with exactly this size (the table knows; A is not asked).
  Ternary owns(Block b) const noexcept {
    if (!b) return Ternary::no;
    const Entry* e = find(b.ptr);
    return to_ternary(e != nullptr && e->state == State::live && e->size == b.size);
  }

  bool deallocate_all(source_location at = source_location::current()) noexcept
    requires has_deallocate_all<A>
  {
    const bool intact = check_all(at, "deallocate_all");
    for (std::size_t i = 0; i < cap_; ++i) {
      Entry& e = table_[i];
      if (e.state != State::live) continue;
      e.state = State::freed;
      e.freed_at = at;
      ++freed_;
    }
    live_ = 0;
    return parent_.deallocate_all() && intact;
  }

  Ternary empty() const noexcept { return to_ternary(live_ == 0); }

  /// Checks the header and guard bytes of every live block now: one report per damaged block; false if any.
  bool check(source_location at = source_location::current()) noexcept { return check_all(at, "check"); }

  /// Reports every live block as a leak now (as the destructor will), without freeing any; their number.
  std::size_t report_leaks() noexcept {
    std::size_t left = live_;
    for (std::size_t i = 0; i < cap_ && left != 0; ++i)
      if (table_[i].state == State::live) report_leak(table_[i], --left != 0);
    return live_;
  }

  /// Blocks handed out and not freed.
  std::size_t live_blocks() const noexcept { return live_; }

  PolicyType& policy() noexcept { return policy_ref(); }
  const PolicyType& policy() const noexcept {
    if constexpr (policy_by_reference) return *policy_;
    else return policy_;
  }
  A& parent() noexcept { return parent_; }
  const A& parent() const noexcept { return parent_; }

 private:
  enum class State : std::uint8_t { empty, live, freed };
  struct Entry {
    void* ptr;
    std::size_t size;
    std::size_t offset;  // payload - A's block start; A's block is offset + size + G bytes (A's exact sizes)
    State state;
    source_location allocated_at;
    source_location freed_at;
  };

  static constexpr std::size_t header_room(std::size_t a) noexcept { return round_up(sizeof(Header), a); }
  static Header& header(const Entry& e) noexcept {
    return *std::launder(reinterpret_cast<Header*>(static_cast<std::byte*>(e.ptr) - sizeof(Header)));
  }
  // A's block, from the table (never from the header, which the caller may have overwritten).
  static Block whole_of(const Entry& e) noexcept {
    return Block{static_cast<std::byte*>(e.ptr) - e.offset, e.offset + e.size + G};
  }
  static Header expected_header(const Entry& e) noexcept {
    return Header{e.offset + e.size + G, e.offset, e.size, detail::checked_canary ^ address_of(e.ptr)};
  }
  static void write_guard(Block b) noexcept {
    std::memset(static_cast<std::byte*>(b.ptr) + b.size, detail::checked_guard_byte, G);
  }

  Block allocate_at(std::size_t n, std::size_t a, source_location at) noexcept {
    const std::size_t al = a > A::alignment ? a : A::alignment;
    const std::size_t room = header_room(al);
    std::size_t total = 0;
    if (n == 0 || !add_checked(n, room + G, total)) return {};
    if (!reserve_one()) return {};
    Block w{};
    if constexpr (has_aligned_allocate<A>) {
      w = al > A::alignment ? parent_.aligned_allocate(total, al) : parent_.allocate(total);
    } else {
      w = parent_.allocate(total);
    }
    if (!w) return {};
    const Block b{static_cast<std::byte*>(w.ptr) + room, n};
    Entry& e = slot_for(b.ptr);
    if (e.state == State::freed) --freed_;
    e = Entry{b.ptr, n, room, State::live, at, {}};
    ::new (static_cast<std::byte*>(b.ptr) - sizeof(Header)) Header(expected_header(e));
    write_guard(b);
    ++live_;
    return b;
  }

  bool move_to(Block& b, std::size_t n, std::size_t a, source_location at) noexcept {
    if (!b) {
      if (n == 0) return true;
      const Block r = allocate_at(n, a, at);
      if (!r) return false;
      b = r;
      return true;
    }
    Entry* e = live_entry(b, at, "reallocate");
    if (e == nullptr) return false;
    if (e->size != b.size) return report_wrong_size(*e, b, at), false;
    if (!check_guards(*e, at, "reallocate", false)) return false;
    if (n == 0) {
      const bool r = deallocate(b, at);
      b = {};
      return r;
    }
    if (n == b.size && is_aligned(b.ptr, a)) return true;
    return detail::move_block(b, allocate_at(n, a, at), *this,
                              [this, at](Block x) noexcept { return deallocate(x, at); });
  }

  // The live entry of b; otherwise reports a double free or a foreign block and returns null.
  Entry* live_entry(Block b, source_location at, const char* call) noexcept {
    Entry* e = find(b.ptr);
    if (e != nullptr && e->state == State::live) return e;
    std::size_t len = 0;
    if (e != nullptr) {
      CheckedReport r = report(CheckedViolation::double_free, b.ptr, e->size, b.size, *e, at, false);
      detail::append_text(r.message, sizeof r.message, len, "alloy::Checked: double free: %s of block %p (%zu bytes)",
                          call, b.ptr, b.size);
      detail::append_site(r.message, sizeof r.message, len, "", at);
      detail::append_text(r.message, sizeof r.message, len, "; the block (%zu bytes) was allocated", e->size);
      detail::append_site(r.message, sizeof r.message, len, "", e->allocated_at);
      detail::append_site(r.message, sizeof r.message, len, "and already freed", e->freed_at);
      policy_ref()(r);
      return nullptr;
    }
    CheckedReport r = report(CheckedViolation::foreign_block, b.ptr, 0, b.size, Entry{}, at, false);
    detail::append_text(r.message, sizeof r.message, len,
                        "alloy::Checked: foreign block: %s of block %p (%zu bytes)", call, b.ptr, b.size);
    detail::append_site(r.message, sizeof r.message, len, "", at);
    detail::append_text(r.message, sizeof r.message, len, ": this allocator never handed out that address");
    for (std::size_t i = 0; i < cap_; ++i) {  // the error path: a scan is affordable
      const Entry& o = table_[i];
      if (o.state != State::live || address_of(b.ptr) < address_of(o.ptr) ||
          address_of(b.ptr) >= address_of(o.ptr) + o.size)
        continue;
      r.size = o.size;
      r.allocated_at = o.allocated_at;
      detail::append_text(r.message, sizeof r.message, len, "; it points %zu bytes into live block %p (%zu bytes)",
                          static_cast<std::size_t>(address_of(b.ptr) - address_of(o.ptr)), o.ptr, o.size);
      detail::append_site(r.message, sizeof r.message, len, "allocated", o.allocated_at);
      break;
    }
    policy_ref()(r);
    return nullptr;
  }

  void report_leak(const Entry& e, bool more) noexcept {
    CheckedReport r = report(CheckedViolation::leak, e.ptr, e.size, e.size, e, {}, more);
    std::size_t len = 0;
    detail::append_text(r.message, sizeof r.message, len, "alloy::Checked: leak: block %p (%zu bytes)", e.ptr,
                        e.size);
    detail::append_site(r.message, sizeof r.message, len, "allocated", e.allocated_at);
    detail::append_text(r.message, sizeof r.message, len, " was never freed");
    policy_ref()(r);
  }

  void report_wrong_size(const Entry& e, Block b, source_location at) noexcept {
    CheckedReport r = report(CheckedViolation::wrong_size_free, b.ptr, e.size, b.size, e, at, false);
    std::size_t len = 0;
    detail::append_text(r.message, sizeof r.message, len,
                        "alloy::Checked: wrong-size free: block %p was allocated with %zu bytes", b.ptr, e.size);
    detail::append_site(r.message, sizeof r.message, len, "", e.allocated_at);
    detail::append_text(r.message, sizeof r.message, len, ", but given back with %zu bytes", b.size);
    detail::append_site(r.message, sizeof r.message, len, "", at);
    policy_ref()(r);
  }

  // Checks every live block; the abort policy acts after the last damaged one is reported.
  bool check_all(source_location at, const char* call) noexcept {
    std::size_t damaged = 0;
    for (std::size_t i = 0; i < cap_; ++i) damaged += table_[i].state == State::live && !intact(table_[i]);
    for (std::size_t i = 0, left = damaged; i < cap_ && left != 0; ++i)
      if (table_[i].state == State::live && !intact(table_[i])) check_guards(table_[i], at, call, --left != 0);
    return damaged == 0;
  }

  bool intact(const Entry& e) const noexcept { return underrun_at(e) == 0 && overrun_at(e) == SIZE_MAX; }
  // 0 when the header is intact, else 1.
  static int underrun_at(const Entry& e) noexcept {
    const Header& h = header(e);
    const Header x = expected_header(e);
    return h.canary == x.canary && h.size == x.size && h.offset == x.offset && h.whole == x.whole ? 0 : 1;
  }
  // The offset from the block's end of the first changed guard byte; SIZE_MAX when none changed.
  static std::size_t overrun_at(const Entry& e) noexcept {
    const auto* g = static_cast<const unsigned char*>(e.ptr) + e.size;
    constexpr std::uint64_t word = 0x0101010101010101ull * detail::checked_guard_byte;
    std::uint64_t w[G / 8];
    std::memcpy(w, g, G);  // the common case in two loads; the byte is looked for only when one differs
    bool same = true;
    for (std::uint64_t x : w) same &= x == word;
    if (same) return SIZE_MAX;
    for (std::size_t i = 0; i < G; ++i)
      if (g[i] != detail::checked_guard_byte) return i;
    return SIZE_MAX;
  }

  // Reports damage to e's header (underrun) or guard bytes (overrun); true when both are intact.
  bool check_guards(const Entry& e, source_location at, const char* call, bool more) noexcept {
    const bool under = underrun_at(e) != 0;
    const std::size_t over = overrun_at(e);
    if (!under && over == SIZE_MAX) return true;
    if (under) {
      CheckedReport r = report(CheckedViolation::underrun, e.ptr, e.size, e.size, e, at, more || over != SIZE_MAX);
      std::size_t len = 0;
      detail::append_text(r.message, sizeof r.message, len,
                          "alloy::Checked: buffer underrun: the %zu bytes before block %p (%zu bytes)",
                          sizeof(Header), e.ptr, e.size);
      detail::append_site(r.message, sizeof r.message, len, "allocated", e.allocated_at);
      detail::append_text(r.message, sizeof r.message, len, " were overwritten; found by %s", call);
      detail::append_site(r.message, sizeof r.message, len, "", at);
      header(e) = expected_header(e);  // rebuilt from the table: reported once
      policy_ref()(r);
    }
    if (over != SIZE_MAX) {
      CheckedReport r = report(CheckedViolation::overrun, e.ptr, e.size, e.size, e, at, more);
      std::size_t len = 0;
      detail::append_text(r.message, sizeof r.message, len,
                          "alloy::Checked: buffer overrun: block %p (%zu bytes)", e.ptr, e.size);
      detail::append_site(r.message, sizeof r.message, len, "allocated", e.allocated_at);
      detail::append_text(r.message, sizeof r.message, len,
                          " was written past its end: the first changed guard byte is at offset %zu (byte %zu after the "
                          "end); found by %s",
                          e.size + over, over + 1, call);
      detail::append_site(r.message, sizeof r.message, len, "", at);
      write_guard(Block{e.ptr, e.size});
      policy_ref()(r);
    }
    return false;
  }

  static CheckedReport report(CheckedViolation k, const void* p, std::size_t size, std::size_t given, const Entry& e,
                              source_location at, bool more) noexcept {
    CheckedReport r;
    r.kind = k;
    r.block = p;
    r.size = size;
    r.given_size = given;
    r.allocated_at = e.allocated_at;
    r.freed_at = e.freed_at;
    r.call_at = at;
    r.more_follow = more;
    return r;
  }

  void give_back(Entry& e) noexcept {
    if constexpr (has_deallocate<A>) (void)parent_.deallocate(whole_of(e));
    e.state = State::freed;
    --live_;
  }

  // The table: open addressing, linear probing, keyed by the payload address. Freed entries stay (to tell a
  // double free from a foreign block) until their address is handed out again or they outnumber the live ones
  // by 4096 at a rehash.
  static std::size_t hash(const void* p, std::size_t cap) noexcept {
    const std::uint64_t x = static_cast<std::uint64_t>(address_of(p) >> 4) * 0x9E3779B97F4A7C15ull;
    return static_cast<std::size_t>(x ^ (x >> 32)) & (cap - 1);
  }
  Entry* find(const void* p) const noexcept {
    if (cap_ == 0) return nullptr;
    for (std::size_t i = hash(p, cap_);; i = (i + 1) & (cap_ - 1)) {
      Entry& e = table_[i];
      if (e.state == State::empty) return nullptr;
      if (e.ptr == p) return &e;
    }
  }
  // The entry for p: its old one (a freed address handed out again) or an empty one. reserve_one() ran first.
  Entry& slot_for(void* p) noexcept {
    for (std::size_t i = hash(p, cap_);; i = (i + 1) & (cap_ - 1)) {
      Entry& e = table_[i];
      if (e.state == State::empty || e.ptr == p) return e;
    }
  }
  // Room for one more entry (at most 3/4 full); false when the table cannot grow.
  bool reserve_one() noexcept {
    if ((live_ + freed_ + 1) * 4 <= cap_ * 3) return true;
    const bool keep_freed = freed_ <= live_ + 4096;
    const std::size_t kept = live_ + (keep_freed ? freed_ : 0) + 1;
    std::size_t cap = 64;
    while (cap * 3 < kept * 4 * 2) cap *= 2;  // half full after the rehash at most
    auto* t = static_cast<Entry*>(std::calloc(cap, sizeof(Entry)));  // State::empty is 0
    if (t == nullptr) return false;
    for (std::size_t i = 0; i < cap; ++i) ::new (&t[i]) Entry{nullptr, 0, 0, State::empty, {}, {}};
    Entry* old = std::exchange(table_, t);
    const std::size_t old_cap = std::exchange(cap_, cap);
    std::size_t freed = 0;
    for (std::size_t i = 0; i < old_cap; ++i) {
      const Entry& e = old[i];
      if (e.state == State::live || (e.state == State::freed && keep_freed)) {
        slot_for(e.ptr) = e;
        freed += e.state == State::freed;
      }
    }
    freed_ = freed;
    std::free(old);
    return true;
  }

  [[no_unique_address]] A parent_{};
  static auto hold(PolicyType& p) noexcept {
    if constexpr (policy_by_reference) return &p;
    else return std::move(p);
  }
  PolicyType& policy_ref() noexcept {
    if constexpr (policy_by_reference) return *policy_;
    else return policy_;
  }

  [[no_unique_address]] std::conditional_t<policy_by_reference, PolicyType*, PolicyType> policy_{};
  Entry* table_ = nullptr;
  std::size_t cap_ = 0;
  std::size_t live_ = 0;
  std::size_t freed_ = 0;
};

}  // namespace alloy

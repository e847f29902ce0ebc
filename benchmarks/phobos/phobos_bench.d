// alloy_bench_phobos: W1-W5 of docs/workloads.md over D's std.experimental.allocator (the design alloy follows),
// written the same way as benchmarks/w*.cpp: the same generator and seed reseeded every repetition, a byte written
// into every block, the address folded into a sink, the allocator built before the clock starts, ns/op = time / ops.
//   alloy_bench_phobos [--reps=N] [--out=FILE.json] [--filter=SUBSTRING]
//   alloy_bench_phobos --callgrind=<W>/<stack> --n=N     one untimed pass for valgrind (W1, W4), as alloy_bench's
//   alloy_bench_phobos --list-stacks                    the stacks with their labels as JSON, as alloy_bench's
// Writes Google-Benchmark-shaped JSON (one "median" aggregate per benchmark, with the counter "ns/op") that
// tools/bench_report.py merges with alloy_bench's. Built by benchmarks/CMakeLists.txt with ldc2 -O2 -release.
import core.atomic : atomicOp;
import core.sync.event : Event;
import core.sync.semaphore : Semaphore;
import core.thread : Thread;
import core.time : MonoTime;
import core.volatile : volatileStore;
import std.algorithm : sort, canFind;
import std.array : appender;
import std.conv : to;
import std.experimental.allocator.building_blocks.bitmapped_block : BitmappedBlock, SharedBitmappedBlock;
import std.experimental.allocator.building_blocks.null_allocator : NullAllocator;
import std.experimental.allocator.building_blocks.region : Region;
import std.experimental.allocator.mallocator : Mallocator;
import std.format : format;
import std.stdio : File, stderr, stdout, writeln;
import std.string : indexOf;
import std.typecons : No, Yes;

enum size_t KiB = 1024, MiB = 1024 * 1024;

struct Rng {
    ulong x = 0x9E3779B97F4A7C15UL;
    ulong next() nothrow @nogc {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        return x * 0x2545F4914F6CDD1DUL;
    }
}

__gshared size_t gSink;
shared size_t gSharedSink;

struct Run { double nsPerOp; size_t failures; }

pragma(inline, false)
Run w1(A)(ref A a, size_t pairs = 10_000_000) {
    size_t s, failures;
    const t0 = MonoTime.currTime;
    foreach (i; 0 .. pairs) {
        auto b = a.allocate(64);
        if (b is null) { ++failures; continue; }
        volatileStore(cast(ubyte*) b.ptr, cast(ubyte) i);
        s ^= cast(size_t) b.ptr;
        a.deallocate(b);
    }
    const ns = (MonoTime.currTime - t0).total!"nsecs";
    gSink ^= s;
    return Run(ns / (2.0 * pairs), failures);
}

enum size_t w2Blocks = 4096, w2Rounds = 1000;

uint[] w2Permutation() {
    auto p = new uint[w2Blocks];
    foreach (i, ref v; p) v = cast(uint) i;
    Rng rng;
    for (size_t i = w2Blocks - 1; i >= 1; --i) {
        const j = rng.next() % (i + 1);
        const t = p[i]; p[i] = p[j]; p[j] = t;
    }
    return p;
}

pragma(inline, false)
Run w2(A)(ref A a) {
    auto perm = w2Permutation();
    auto blocks = new void[][w2Blocks];
    size_t s, failures;
    const t0 = MonoTime.currTime;
    foreach (r; 0 .. w2Rounds) {
        foreach (i; 0 .. w2Blocks) {
            auto b = a.allocate(64);
            if (b is null) ++failures;
            else { volatileStore(cast(ubyte*) b.ptr, cast(ubyte) i); s ^= cast(size_t) b.ptr; }
            blocks[i] = b;
        }
        foreach (i; 0 .. w2Blocks) {
            auto b = blocks[perm[i]];
            if (b !is null) a.deallocate(b);
        }
    }
    const ns = (MonoTime.currTime - t0).total!"nsecs";
    gSink ^= s;
    return Run(ns / (2.0 * w2Blocks * w2Rounds), failures);
}

pragma(inline, false)
Run w3(A)(ref A a) {
    enum size_t slotsN = 2048, steps = 10_000_000;
    auto slots = new void[][slotsN];
    Rng rng;
    size_t s, failures;
    const t0 = MonoTime.currTime;
    foreach (i; 0 .. steps) {
        const k = rng.next() % slotsN;
        if (slots[k] is null) {
            auto b = a.allocate(1 + rng.next() % 512);
            if (b is null) { ++failures; continue; }
            volatileStore(cast(ubyte*) b.ptr, cast(ubyte) i);
            s ^= cast(size_t) b.ptr;
            slots[k] = b;
        } else {
            a.deallocate(slots[k]);
            slots[k] = null;
        }
    }
    const ns = (MonoTime.currTime - t0).total!"nsecs";
    foreach (b; slots) if (b !is null) a.deallocate(b);
    gSink ^= s;
    return Run(ns / cast(double) steps, failures);
}

pragma(inline, false)
Run w4(A)(ref A a, size_t allocs = 1_000_000, size_t rounds = 20) {
    Rng rng;
    size_t s, failures;
    const t0 = MonoTime.currTime;
    foreach (r; 0 .. rounds) {
        foreach (i; 0 .. allocs) {
            auto b = a.allocate(16 + rng.next() % 241);
            if (b is null) { ++failures; continue; }
            volatileStore(cast(ubyte*) b.ptr, cast(ubyte) i);
            s ^= cast(size_t) b.ptr;
        }
        a.deallocateAll();
    }
    const ns = (MonoTime.currTime - t0).total!"nsecs";
    gSink ^= s;
    return Run(ns / cast(double)(rounds * (allocs + 1)), failures);
}

pragma(inline, false)
size_t w5Thread(A)(A* a) {
    enum size_t pairs = 5_000_000;
    size_t s, failures;
    foreach (i; 0 .. pairs) {
        auto b = a.allocate(64);
        if (b is null) { ++failures; continue; }
        volatileStore(cast(ubyte*) b.ptr, cast(ubyte) i);
        s ^= cast(size_t) b.ptr;
        a.deallocate(b);
    }
    atomicOp!"^="(gSharedSink, s);
    return failures;
}

Run w5(A)(A* a) {
    enum nThreads = 2;
    auto ready = new Semaphore(0);
    auto go = new Event(true, false);
    shared size_t[nThreads] failures;
    Thread[nThreads] threads;
    foreach (t; 0 .. nThreads) {
        const idx = t;
        threads[t] = new Thread({
            ready.notify();
            go.wait();
            failures[idx] = w5Thread(a);
        });
        threads[t].start();
    }
    foreach (t; 0 .. nThreads) ready.wait();
    const t0 = MonoTime.currTime;
    go.set();
    foreach (th; threads) th.join();
    const ns = (MonoTime.currTime - t0).total!"nsecs";
    return Run(ns / (2.0 * nThreads * 5_000_000), failures[0] + failures[1]);
}

struct Result { string name; double median; double[] samples; size_t failures; }

Result[] results;
int reps = 5;
string filter;
bool listOnly;     // --list-stacks: bench() records the names and runs nothing
string[] listed;

void bench(string name, Run delegate() once) {
    if (listOnly) { listed ~= name; return; }
    if (filter.length && !name.canFind(filter)) return;
    stderr.writef("\r  phobos %-70s", name);
    stderr.flush();
    double[] xs;
    size_t failures;
    foreach (r; 0 .. reps) {
        const run = once();
        xs ~= run.nsPerOp;
        failures = run.failures;
    }
    auto sorted = xs.dup;
    sort(sorted);
    const n = sorted.length;
    const med = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    results ~= Result(name, med, xs, failures);
}

ubyte[] w4Arena;

ubyte[] w4ArenaTouched() {  // allocated and touched once, before any timing, as alloy_bench's w4_arena
    if (w4Arena is null) {
        w4Arena = (cast(ubyte*) Mallocator.instance.allocate(256 * MiB).ptr)[0 .. 256 * MiB];
        w4Arena[] = 0;
    }
    return w4Arena;
}

alias BBSingle = BitmappedBlock!(64, 64, Mallocator, No.multiblock);
alias BBMulti = BitmappedBlock!(64, 64, Mallocator, Yes.multiblock);
alias SBBSingle = SharedBitmappedBlock!(64, 64, Mallocator, No.multiblock);
alias SBBMulti = SharedBitmappedBlock!(64, 64, Mallocator, Yes.multiblock);
enum single = "phobos BitmappedBlock!(64,64,Mallocator,No.multiblock)";
enum multi = "phobos BitmappedBlock!(64,64,Mallocator)";
enum region = "phobos Region!()";
enum sharedSingle = "phobos SharedBitmappedBlock!(64,64,Mallocator,No.multiblock)";
enum sharedMulti = "phobos SharedBitmappedBlock!(64,64,Mallocator)";

/// Each stack's label: the short name tools/bench_report.py shows for it (column headers, the chart), as alloy_bench's
/// descriptors carry one (benchmarks/stacks.hpp). A stack without one stops --list-stacks.
string labelOf(string stack) {
    switch (stack) {
        case single: return "D BB single";
        case multi: return "D BB multi";
        case sharedSingle: return "D SharedBB single";
        case sharedMulti: return "D SharedBB multi";
        case region: return "D Region";
        default: return null;
    }
}

/// `--list-stacks`: {"binary", "malloc_names": [], "not_built": [], "rows": [{"workload", "name", "label", "kind",
/// "malloc"}...], "targets": []}, the shape of `alloy_bench --list-stacks`.
int listStacks() {
    auto o = appender!string;
    o ~= `{"binary": "alloy_bench_phobos", "malloc_names": [], "not_built": [], "rows": [`;
    foreach (i, n; listed) {
        const slash = n.indexOf('/');
        const stack = n[slash + 1 .. $], label = labelOf(stack);
        if (label is null) {
            stderr.writeln("alloy_bench_phobos: no label for ", stack, " (labelOf)");
            return 1;
        }
        o ~= format(`%s%s  {"workload": "%s", "name": "%s", "label": "%s", "kind": "anchor", "malloc": false}`,
                    i ? "," : "", "\n", n[0 .. slash], stack, label);
    }
    o ~= "],\n \"targets\": []}\n";
    stdout.write(o.data);
    return 0;
}

/// `--callgrind=NAME --n=N`: one untimed pass for valgrind, as `alloy_bench --callgrind` (W1: N pairs; W4: one round
/// of N allocations and the deallocateAll). `--list-callgrind` prints the names with their ops per unit of N.
int callgrindPass(string name, size_t n) {
    if (name == "W1/" ~ single) { auto a = BBSingle(1 * MiB); w1(a, n); return 0; }
    if (name == "W1/" ~ multi) { auto a = BBMulti(1 * MiB); w1(a, n); return 0; }
    if (name == "W4/" ~ region) { auto a = Region!()(w4ArenaTouched()); w4(a, n, 1); return 0; }
    stderr.writeln("unknown callgrind pass: ", name);
    return 2;
}

int main(string[] args) {
    string outPath, cgName;
    size_t cgN = 0;
    foreach (a; args[1 .. $]) {
        if (a.length > 7 && a[0 .. 7] == "--reps=") reps = a[7 .. $].to!int;
        else if (a.length > 6 && a[0 .. 6] == "--out=") outPath = a[6 .. $];
        else if (a.length > 9 && a[0 .. 9] == "--filter=") filter = a[9 .. $];
        else if (a.length > 12 && a[0 .. 12] == "--callgrind=") cgName = a[12 .. $];
        else if (a.length > 4 && a[0 .. 4] == "--n=") cgN = a[4 .. $].to!size_t;
        else if (a == "--list-stacks") listOnly = true;
        else if (a == "--list-callgrind") {
            writeln("W1/" ~ single, "\t2\nW1/" ~ multi, "\t2\nW4/" ~ region, "\t1");
            return 0;
        }
        else {
            stderr.writeln("usage: alloy_bench_phobos [--reps=N] [--out=FILE.json] [--filter=SUBSTRING] | "
                ~ "--callgrind=NAME --n=N | --list-callgrind | --list-stacks");
            return 2;
        }
    }
    if (cgName.length) return callgrindPass(cgName, cgN);

    bench("W1/" ~ single, () { auto a = BBSingle(1 * MiB); return w1(a); });
    bench("W1/" ~ multi, () { auto a = BBMulti(1 * MiB); return w1(a); });
    bench("W2/" ~ single, () { auto a = BBSingle(256 * KiB); return w2(a); });
    bench("W2/" ~ multi, () { auto a = BBMulti(256 * KiB); return w2(a); });
    bench("W3/" ~ multi, () { auto a = BBMulti(4 * MiB); return w3(a); });
    bench("W4/" ~ region, () {
        auto a = Region!()(w4ArenaTouched());
        return w4(a);
    });
    bench("W5/" ~ sharedSingle, () {
        auto a = new shared SBBSingle(1 * MiB);
        return w5(a);
    });
    bench("W5/" ~ sharedMulti, () {
        auto a = new shared SBBMulti(1 * MiB);
        return w5(a);
    });
    if (listOnly) return listStacks();
    stderr.writeln();

    auto o = appender!string;
    o ~= `{"context": {"executable": "alloy_bench_phobos", "compiler": "` ~ __VENDOR__ ~ " " ~ __VERSION__.to!string ~ `"},` ~ "\n";
    o ~= `"benchmarks": [` ~ "\n";
    foreach (i, r; results) {
        o ~= format(`{"name": "%s_median", "run_name": "%s", "run_type": "aggregate", "aggregate_name": "median", `
                ~ `"repetitions": %d, "label": "anchor", "ns/op": %.6g, "failures": %d, "samples": [%(%.6g, %)]}%s` ~ "\n",
                r.name, r.name, reps, r.median, r.failures, r.samples, i + 1 < results.length ? "," : "");
    }
    o ~= "]}\n";
    if (outPath.length) File(outPath, "w").write(o.data);
    else stdout.write(o.data);
    return 0;
}

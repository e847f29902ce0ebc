// Phobos' side of tests/bitmapped_block.cpp's replay: BitmappedBlock!(64, 16) over the first LEN bytes of a
// 4096-aligned buffer; reads make_trace.py's ops on stdin, prints one answer per op (offsets from the buffer).
import std.experimental.allocator.building_blocks.bitmapped_block;
import std.typecons : Ternary;
import std.stdio, std.conv, std.array;
import core.stdc.stdlib : aligned_alloc;

void main(string[] args)
{
    immutable len = args[1].to!size_t;
    auto m = (cast(ubyte*) aligned_alloc(4096, len + 4096))[0 .. len];
    auto a = BitmappedBlock!(64, 16)(m);
    void[][size_t] live;
    long off(void[] b) { return b.ptr ? cast(long)(b.ptr - cast(void*) m.ptr) : -1; }
    foreach (line; stdin.byLine)
    {
        auto t = line.idup.split;
        immutable id = t[1].to!size_t;
        final switch (t[0])
        {
        case "A":
            auto b = a.allocate(t[2].to!size_t);
            writeln(off(b), " ", b.length);
            if (b.ptr) live[id] = b;
            break;
        case "N":
            auto b = a.alignedAllocate(t[2].to!size_t, t[3].to!uint);
            writeln(off(b), " ", b.length);
            if (b.ptr) live[id] = b;
            break;
        case "F":
            if (auto p = id in live) { writeln(a.deallocate(*p)); live.remove(id); } else writeln("-");
            break;
        case "E":
            if (auto p = id in live) { immutable ok = a.expand(*p, t[2].to!size_t); writeln(ok, " ", p.length); }
            else writeln("-");
            break;
        case "R":
            immutable n = t[2].to!size_t;
            if (auto p = id in live)
            {
                // Phobos' reallocate slices past the block on a shrink that stays inside its last block (a range
                // error, fixed in alloy): not replayed.
                if (n < p.length && (n + 63) / 64 * 64 > p.length) { writeln("skip"); break; }
                immutable ok = a.reallocate(*p, n);
                writeln(ok, " ", off(*p), " ", p.length);
            }
            else writeln("-");
            break;
        }
    }
    writeln("empty ", a.empty == Ternary.yes);
}

"""The fleet blobs behind arbiter.dask: merging is associative and keeps log order (so any
tree Dask builds gives one answer), the merged result renders what one run over the same
text renders, and a damaged blob is refused with ValueError, never read past its end."""

import pytest

from arbiter import _native
from arbiter.denials import Denials
from denial_logs import generate


@pytest.fixture(scope="module")
def chunks(debian_path, tmp_path_factory):
    d = tmp_path_factory.mktemp("blobs")
    texts = [generate(debian_path, fmt, 60, seed, d / f"{fmt}.log").read_bytes()
             for seed, fmt in enumerate(["audit.log", "journal", "mixed", "ausearch"])]
    den = Denials(debian_path)
    return den, texts, [_native._fleet_digest(den, t, f"log{i}") for i, t in enumerate(texts)]


def test_merge_is_associative_and_equals_one_run(chunks):
    den, texts, blobs = chunks
    a, b, c, e = blobs
    left = _native._fleet_merge([_native._fleet_merge([a, b]), _native._fleet_merge([c, e])])
    right = _native._fleet_merge([a, _native._fleet_merge([b, c, e])])
    flat = _native._fleet_merge(blobs)
    # (The blobs' count tables are hash maps: compare what they decode to, not their bytes.)
    results = [_native._fleet_finish(b, module="m", requires=True) for b in (left, right, flat)]
    assert results[0] == results[1] == results[2]
    allow, paths, rules, verdicts, counts = results[2]
    assert allow == den.allow(b"".join(texts), module="m", requires=True).text
    assert allow.count("allow ") > 5 and list(paths) == ["log0", "log1", "log2", "log3"]
    assert counts["lines"] == sum(t.count(b"\n") for t in texts)


def test_chunks_of_a_run_skip_what_an_earlier_chunk_kept_without_changing_the_result(
        debian_path, chunks):
    """Chunks that repeat each other (a fleet's hosts), digested on two workers' engines in
    an order unlike log order: each engine skips the denials an earlier chunk of the run
    kept there, and the merge renders what the plain digests render."""
    _, texts, _ = chunks
    order = [texts[0], texts[1], texts[0], texts[2], texts[1], texts[3], texts[0]]
    plain = Denials(debian_path)
    want = [_native._fleet_digest(plain, t, f"h{i}") for i, t in enumerate(order)]
    workers = [Denials(debian_path), Denials(debian_path)]
    got = [None] * len(order)
    for run in (7, 8):  # a second run on the same engines must not skip what run 7 kept
        for i in [4, 6, 1, 0, 5, 2, 3]:
            got[i] = _native._fleet_digest(workers[i % 2], order[i], f"h{i}", run=run, chunk=i)
        for i, blob in enumerate(got):
            # Smaller exactly when an earlier chunk (by index) on the same worker had the
            # same text; a chunk digested after a later one with its text keeps it all.
            earlier = any(order[j] == order[i] for j in range(i % 2, i, 2))
            assert (len(blob) < 0.8 * len(want[i])) == earlier, i
        for opts in ({}, {"module": "m", "requires": True, "xperms": True}):
            assert (_native._fleet_finish(_native._fleet_merge(got), **opts)
                    == _native._fleet_finish(_native._fleet_merge(want), **opts))
    with pytest.raises(ValueError):
        _native._fleet_digest(plain, texts[0], "h", run=1)


def test_damaged_blobs_are_refused(chunks):
    _, _, blobs = chunks
    for bad in (b"", b"junk", blobs[0][:-1], blobs[0][:40], blobs[0] + b"\0"):
        with pytest.raises(ValueError):
            _native._fleet_merge([bad])
        with pytest.raises(ValueError):
            _native._fleet_finish(bad)
    assert _native._fleet_finish(_native._fleet_merge([]))[0] == ""


def _first_rule_offset(blob: bytes) -> int:
    """Where the first rule's ids (LEB128 varints) start: past the magic, the five counts
    and the flag, the paths, the verdicts and the table of rule names (the blob's
    documented layout)."""
    u32 = lambda at: int.from_bytes(blob[at:at + 4], "little")  # noqa: E731
    at = 8 + 5 * 8 + 1

    def strings(at: int, trailer: int) -> int:
        n, at = u32(at), at + 4
        for _ in range(n):
            at += 4 + u32(at) + trailer
        return at

    at = strings(at, 8)   # paths and their counts
    at = strings(at, 8)   # verdicts and their counts
    at = strings(at, 0)   # rule names
    assert u32(at) > 0, "the chunk counts some rule"
    return at + 4


def test_a_rule_naming_no_name_of_the_table_is_refused(chunks):
    _, _, blobs = chunks
    blob = bytearray(blobs[0])
    at = _first_rule_offset(blob)
    _native._fleet_finish(bytes(blob))  # the offset is right: the blob still reads
    end = at
    while blob[end] & 0x80:
        end += 1
    # The first id, rewritten as the varint of 2**32 - 1 (the blob reads on sequentially).
    blob[at:end + 1] = b"\xff\xff\xff\xff\x0f"
    for call in (lambda b: _native._fleet_merge([b]), _native._fleet_finish):
        with pytest.raises(ValueError, match="rule name 4294967295"):
            call(bytes(blob))


def test_the_final_step_over_blobs_equals_it_over_their_merge(chunks):
    """arbiter.dask hands the top level of its tree to the final step, which merges it in
    place: the same result as the merged blob's, and bad arguments are refused."""
    den, texts, blobs = chunks
    for options in ({}, {"module": "m", "requires": True}, {"dontaudit": True, "xperms": True}):
        assert (_native._fleet_finish(list(blobs), **options)
                == _native._fleet_finish(_native._fleet_merge(blobs), **options))
    assert _native._fleet_finish([])[0] == ""
    with pytest.raises(TypeError):
        _native._fleet_finish("not a blob")
    with pytest.raises(ValueError):
        _native._fleet_finish([blobs[0], blobs[1][:-1]])


def test_a_rule_id_over_64_bits_is_refused(chunks):
    _, _, blobs = chunks
    blob = bytearray(blobs[0])
    at = _first_rule_offset(blob)
    end = at
    while blob[end] & 0x80:
        end += 1
    blob[at:end + 1] = b"\xff" * 10 + b"\x01"
    for call in (lambda b: _native._fleet_merge([b]), _native._fleet_finish):
        with pytest.raises(ValueError, match="over 64 bits"):
            call(bytes(blob))


def test_final_step_over_blobs_that_repeat_each_other_equals_it_over_their_merge(chunks):
    """Two workers each keep the denials they meet first, so the blobs the client gets
    repeat each other; the final step renders them unmerged (a repeated denial changes
    nothing in audit2allow's generator): the same as over their merge."""
    _, _, blobs = chunks
    repeated = [blobs[0], blobs[1], blobs[0], blobs[2], blobs[1], blobs[3]]
    for opts in ({}, {"module": "m", "requires": True, "dontaudit": True, "xperms": True}):
        got = _native._fleet_finish(repeated, **opts)
        assert got == _native._fleet_finish(_native._fleet_merge(repeated), **opts)
        assert got[0].count("allow ") > 5 or got[0].count("dontaudit ") > 5


def test_access_vectors_split_over_blobs_merge_as_the_generator_merges_denials(
        debian_path, tmp_path):
    """A blob holds access vectors, not denials: the same (source, target, class, verdict)
    met in several blobs with other permissions, ioctl commands, booleans or constraint
    texts must give the text one run over the same lines gives (the first denial's
    verdict, every permission and command), through the tree's merges and without them."""
    text = generate(debian_path, "mixed", 400, 11, tmp_path / "mixed.log").read_bytes()
    lines = text.splitlines(keepends=True)
    # Five blobs, each line sent to one of them: every vector's denials spread over blobs.
    chunks = [b"".join(lines[i::5]) for i in range(5)]
    den = Denials(debian_path)
    blobs = [_native._fleet_digest(den, c, f"c{i}", run=3, chunk=i) for i, c in enumerate(chunks)]
    joined = b"".join(chunks)
    for opts in ({}, {"module": "m", "requires": True, "xperms": True}, {"dontaudit": True}):
        want = den.allow(joined, **opts).text
        assert "This avc can be allowed using" in want or opts.get("dontaudit")
        for got in (_native._fleet_finish(blobs, **opts),
                    _native._fleet_finish(_native._fleet_merge(blobs), **opts),
                    _native._fleet_finish([_native._fleet_merge(blobs[:2]),
                                           _native._fleet_merge(blobs[2:])], **opts)):
            assert got[0] == want
    assert "allowxperm" in den.allow(joined, xperms=True).text
    assert "constraint violation" in den.allow(joined).text

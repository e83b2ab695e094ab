"""The decoder's compiled passes over a column: the message kernel, key
collection, dictionaries and bitmaps."""
from __future__ import annotations

import numpy as np
from ...codegen.jit import njit

from .primitives import (_KD, N_HEADER, N_PROPERTIES, _CHILD, _ascii_ok, _forget_keys, _hash,
                         _intern, _is_key, _key_id, _ld, _ld64, _list_start, _locate, _map_key,
                         _map_start, _prefetch, _same, _skip, _st64, _u64, _utf8_of, _utf8_ok,
                         _value)


# --- the kernels ------------------------------------------------------------------

_PREFETCH = 8
_PREFETCH_LINES = 6
"""Rows ahead whose first bytes (cache lines) are asked for early: messages
sit far apart (their bodies are skipped), so the hardware cannot guess the
next address; the sections before a body are typically within 400 bytes."""


@njit(cache=True)
def _kernel(data, offs, skip, bits, bits_offset, row0, start, count,
            want, wide, walk, all_keys, kb, ko, ksec, kslot, kflag, kt, klen_ok,
            tags, v64, v32, xlens, status, bodies, seen_tags,
            ht, arena, log, xarena, meta, counts, kd, kdt, kda, kdm, kpos):
    """Decode rows ``start .. count`` of one chunk into output rows ``row0 +``.

    ``want[slot]``: the tag a typed header/properties field holds (0: any; -1:
    not asked for, left absent);
    ``wide[slot]``: integers go to ``v64`` (else to ``v32``: the typed fields
    of 32 bits or less); ``walk[sec]``: decode that keyed section (``walk[4]``, ``walk[5]``: walk
    the header, the properties; a list not walked is neither checked nor read); requested
    keys: bytes ``kb`` split by ``ko``, section ``ksec``, output slot
    ``kslot``, ``kflag`` 1 for a symbol key that is not ASCII (never a valid
    symbol). Outputs, by (slot, row): ``tags``; ``v64`` the i, u and f
    children (a double's bits) and the offset of a binary child's bytes in
    ``xarena`` (``xlens`` their length); ``v32`` dictionary indices, booleans
    and narrow integers. Per row: ``status``, and ``bodies`` 1 when an
    amqp-value or amqp-sequence section is there. The dictionary of the keys
    walked (``kd``, ``kdt``, ``kda``, ``kdm``, ``kpos``: ``new_keys``) is
    kept from call to call.

    Returns ``(row, strings, size, binary, keys, dirty)``: ``row == count``
    when done, else the row that needs room for ``strings`` more strings of
    ``size`` bytes, ``binary`` more binary bytes, or (``keys`` > 0) a key
    dictionary for a map of ``keys`` entries in ``size`` bytes (nothing of
    the row stored yet); ``dirty`` when a row that failed had marked tags in
    ``seen_tags``.
    """
    nslots = want.shape[0]
    at_ = np.full(9, -1, np.int64)
    ends_ = np.full(9, -1, np.int64)
    r_tag = np.zeros(nslots, np.int64)
    r_val = np.zeros(nslots, np.int64)
    r_s = np.zeros(nslots, np.int64)
    r_n = np.zeros(nslots, np.int64)
    r_h = np.zeros(nslots, np.uint64)
    touched = np.zeros(nslots, np.int64)
    pending = np.zeros(nslots, np.int64)
    kdp = kd.ctypes.data
    kdtp = kdt.ctypes.data
    kdap = kda.ctypes.data
    kdmp = kdm.ctypes.data
    kdalimit = kda.shape[0]
    ids = kd.shape[0] // _KD
    seed = meta[3]   # the run's secret salt of every hash
    tmask = kdt.shape[0] - 1
    cbuf_ = np.zeros(8, np.uint8)
    d = data.ctypes.data
    at = at_.ctypes.data
    ends = ends_.ctypes.data
    cbuf = cbuf_.ctypes.data
    kbp = kb.ctypes.data
    kop = ko.ctypes.data
    ksecp = ksec.ctypes.data
    ktp = kt.ctypes.data
    kmask = kt.shape[0] - 1
    klenp = klen_ok.ctypes.data
    htp = ht.ctypes.data
    hmask = (ht.shape[0] >> 2) - 1
    hcap = ht.shape[0] >> 2
    arenap = arena.ctypes.data
    alimit = arena.shape[0]
    logp = log.ctypes.data
    metap = meta.ctypes.data
    countsp = counts.ctypes.data
    size = data.shape[0]
    dirty = False
    for local_row in range(start, count):
        r = row0 + local_row
        if local_row + _PREFETCH < count:
            ahead = np.int64(offs[local_row + _PREFETCH]) + skip
            if 0 <= ahead < size:
                for line in range(_PREFETCH_LINES):
                    _prefetch(d + ahead + 64 * line)
        if bits.shape[0] > 0:
            i = bits_offset + local_row
            if (bits[i >> 3] >> (i & 7)) & 1 == 0:
                status[r] = 2
                continue
        p = np.int64(offs[local_row]) + skip
        end = np.int64(offs[local_row + 1])
        if p < 0 or end < p or end > size:
            status[r] = 2
            continue
        st = _locate(d, p, end, at, ends)
        if at_[6] >= 0 or at_[7] >= 0:
            bodies[r] = 1
        ntouched = 0
        npending = 0
        strings = 0
        size_s = 0
        size_x = 0
        # header and properties: every field, in its typed place or VALUE struct
        for which in range(2):
            if st != 0:
                break
            q = at_[0] if which == 0 else at_[3]
            if q < 0 or walk[4 + which] == 0:
                continue
            lend = ends_[0] if which == 0 else ends_[3]
            base = 0 if which == 0 else N_HEADER
            nfields = N_HEADER if which == 0 else N_PROPERTIES
            st, nitems, fp = _list_start(d, q)
            if st != 0:
                break
            if nitems > nfields:
                st = 1   # more fields than the section has: left to the per-message engine
                break
            for i in range(nitems):
                if fp < lend and _ld(d, fp) == 0x40:   # null: the field is absent
                    fp += 1
                    continue
                st, tag, v, s, n, e = _value(d, fp, lend)
                if st != 0:
                    break
                fp = e
                slot = base + i
                w = want[slot]
                if w < 0:   # a field not asked for: checked, not stored
                    continue
                if w != 0 and tag != w:
                    st = 1   # a wrong-typed field: the builder's residual
                    break
                child = _CHILD[tag]
                if child >= 5:   # a string or binary: stored once the row is known good
                    if tag == 16:
                        strings += 1
                        size_s += 4
                    elif child == 5:   # hash it and fetch its dictionary entry early
                        h = _hash(d, s, n, slot ^ seed, size)
                        r_h[slot] = h
                        _prefetch(htp + 32 * np.int64(h & np.uint64(hmask)))
                        strings += 1
                        size_s += n
                    else:
                        size_x += n
                    r_tag[slot] = tag
                    r_val[slot] = v
                    r_s[slot] = s
                    r_n[slot] = n
                    pending[npending] = slot
                    npending += 1
                else:   # stored now (taken back if the row fails)
                    tags[slot, r] = tag
                    seen_tags[slot] |= np.int64(1) << tag
                    if child == 1 or (child == 2 and wide[slot] == 0):
                        v32[slot, r] = v
                    elif child != 0:
                        v64[slot, r] = v
                    touched[ntouched] = slot
                    ntouched += 1
            if st == 0 and fp != lend:
                st = 2
        # the keyed sections asked for
        for sec in range(4):
            if st != 0:
                break
            if walk[sec] == 0:
                continue
            code = 1 if sec == 0 else (2 if sec == 1 else (4 if sec == 2 else 8))
            q = at_[code]
            if q < 0:
                continue
            mend = ends_[code]
            symbolic = sec != 2
            st, entries, mp = _map_start(d, q)
            if st != 0:
                break
            if entries > (mend - mp) >> 1:   # an entry takes two bytes at least
                st = 2
                break
            if kdm[0] + entries > ids or kdm[1] + (mend - mp) > kdalimit:
                if entries > ids or mend - mp > kdalimit:   # too small for this map
                    for j in range(ntouched):
                        tags[touched[j], r] = 0
                    return local_row, 0, mend - mp, 0, entries, dirty
                _forget_keys(kdt, kdm, kpos)   # full: start over (linear: its size is at
                # most the biggest map's, and filling it took as many new keys)
            kdm[2] += 1
            walk_no = kdm[2]
            prev = -1
            for j in range(entries):
                st, kind, s, n, ke = _map_key(d, mp, mend, symbolic)
                if st != 0:
                    break
                v = 0
                if kind == 1:   # a ulong annotation key: its value is the key
                    if all_keys:
                        st = 1
                        break
                    v = 0 if _ld(d, s) == 0x44 else (np.int64(_ld(d, s + 1)) if _ld(d, s) == 0x53
                                                     else _u64(d, s + 1))
                    n = -2
                # the key's id: the one this entry had in the last walk of the section, or
                # the one that followed the previous key when it was last met, or the one
                # after that (a key left out), or looked up
                jj = sec * 64 + j
                if j < 64 and kpos[jj] == n and (
                        _same(kdap, kpos[256 + jj], kdalimit, d, s, size, n) if n >= 0
                        else kpos[256 + jj] == v):
                    kid = kpos[512 + jj]
                else:
                    kid = kpos[768 + sec] if prev < 0 else _ld64(kdp, prev * _KD + 6)
                    if kid >= 0 and not _is_key(kdp, kid, n, v, kdap, kdalimit, d, s, size):
                        kid = _ld64(kdp, kid * _KD + 6)
                        if kid >= 0 and not _is_key(kdp, kid, n, v, kdap, kdalimit, d, s, size):
                            kid = -1
                    if kid < 0:
                        kid = _key_id(d, s, n, v, size, sec, seed, kdp, kdtp, tmask, kdap,
                                      kdalimit, kdmp, kbp, kb.shape[0], kop, ksecp, ktp, kmask,
                                      klenp)
                        if kid < 0:   # hashes crafted to collide: left to the per-message engine
                            st = 1
                            break
                    if prev < 0:
                        kpos[768 + sec] = kid
                    else:
                        _st64(kdp, prev * _KD + 6, kid)
                    if j < 64:
                        kpos[jj] = n
                        kpos[256 + jj] = _ld64(kdp, kid * _KD + 2)
                        kpos[512 + jj] = kid
                if _ld64(kdp, kid * _KD + 5) == walk_no:
                    st = 2   # a key twice in one map
                    break
                _st64(kdp, kid * _KD + 5, walk_no)
                prev = kid
                k = _ld64(kdp, kid * _KD + 4)
                if k < 0 and all_keys and kind == 0:   # every valid key was collected: not this
                    st = 2
                    break
                if k < 0:
                    mp = _skip(d, ke, mend)
                    if mp < 0:
                        st = 2
                        break
                    continue
                if kflag[k] != 0:
                    st = 2   # a symbol key that is not ASCII
                    break
                st, tag, v, s, n, e = _value(d, ke, mend)
                if st != 0:
                    break
                mp = e
                slot = kslot[k]
                child = _CHILD[tag]
                # the same storing steps as for header and properties fields above, written
                # out again on purpose: a helper would take a dozen arrays a value, and numba
                # reference-counts every array argument of a call, which cost more than this
                if child >= 5:   # a string or binary: stored once the row is known good
                    if tag == 16:
                        strings += 1
                        size_s += 4
                    elif child == 5:   # hash it and fetch its dictionary entry early
                        h = _hash(d, s, n, slot ^ seed, size)
                        r_h[slot] = h
                        _prefetch(htp + 32 * np.int64(h & np.uint64(hmask)))
                        strings += 1
                        size_s += n
                    else:
                        size_x += n
                    r_tag[slot] = tag
                    r_val[slot] = v
                    r_s[slot] = s
                    r_n[slot] = n
                    pending[npending] = slot
                    npending += 1
                else:   # stored now (taken back if the row fails)
                    tags[slot, r] = tag
                    seen_tags[slot] |= np.int64(1) << tag
                    if child == 1 or (child == 2 and wide[slot] == 0):
                        v32[slot, r] = v
                    elif child != 0:
                        v64[slot, r] = v
                    touched[ntouched] = slot
                    ntouched += 1
            if st == 0 and mp != mend:
                st = 2
        status[r] = st
        if st != 0:
            for j in range(ntouched):   # take back what the row stored
                tags[touched[j], r] = 0
            dirty |= ntouched > 0
            continue
        # strings and binaries: room first, then interned or copied
        if (strings and (meta[1] + size_s > alimit or 2 * (meta[0] + strings) > hcap
                         or meta[0] + strings > log.shape[0])) or (
                size_x and meta[2] + size_x > xarena.shape[0]):
            for j in range(ntouched):
                tags[touched[j], r] = 0
            return local_row, strings, size_s, size_x, 0, dirty
        for j in range(npending):
            slot = pending[j]
            tag = r_tag[slot]
            tags[slot, r] = tag
            seen_tags[slot] |= np.int64(1) << tag
            if _CHILD[tag] == 5:   # s: the index in the slot's dictionary
                src, at_s, n, limit, h = d, r_s[slot], r_n[slot], size, r_h[slot]
                if tag == 16:   # a char: its UTF-8 encoding
                    n = _utf8_of(r_val[slot], cbuf)
                    src, at_s, limit = cbuf, 0, 8
                    h = _hash(cbuf, 0, n, slot ^ seed, 8)
                v32[slot, r] = _intern(h, src, at_s, n, limit, slot, htp, hmask, arenap, alimit,
                                       logp, metap, countsp)
            else:   # x: the bytes, copied
                n = r_n[slot]
                used = meta[2]
                s = r_s[slot]
                for m in range(n):
                    xarena[used + m] = data[s + m]
                meta[2] = used + n
                v64[slot, r] = used
                xlens[slot, r] = n
    return count, 0, 0, 0, 0, dirty


@njit(cache=True)
def _collect(data, offs, skip, bits, bits_offset, start, count, ht, arena, log, meta, counts):
    """Every distinct key of the keyed sections (slot = the section's number),
    valid ones, first seen first, from the maps that are well formed. Returns
    as the kernel does: ``(row, strings, size)``, row == count when done."""
    at_ = np.full(9, -1, np.int64)
    ends_ = np.full(9, -1, np.int64)
    d = data.ctypes.data
    at = at_.ctypes.data
    ends = ends_.ctypes.data
    htp = ht.ctypes.data
    hmask = (ht.shape[0] >> 2) - 1
    arenap = arena.ctypes.data
    alimit = arena.shape[0]
    logp = log.ctypes.data
    metap = meta.ctypes.data
    countsp = counts.ctypes.data
    size = data.shape[0]
    seed = meta[3]
    for local_row in range(start, count):
        if bits.shape[0] > 0:
            i = bits_offset + local_row
            if (bits[i >> 3] >> (i & 7)) & 1 == 0:
                continue
        p = np.int64(offs[local_row]) + skip
        end = np.int64(offs[local_row + 1])
        if p < 0 or end < p or end > size:
            continue
        if _locate(d, p, end, at, ends) != 0:
            continue
        for sec in range(4):
            code = 1 if sec == 0 else (2 if sec == 1 else (4 if sec == 2 else 8))
            q = at_[code]
            if q < 0:
                continue
            mend = ends_[code]
            symbolic = sec != 2
            for rnd in range(2):   # check the map, then take its keys
                st, entries, mp = _map_start(d, q)
                if st != 0:
                    break
                for j in range(entries):
                    st, kind, s, n, ke = _map_key(d, mp, mend, symbolic)
                    if st != 0:
                        break
                    e = _skip(d, ke, mend)
                    if e < 0:
                        st = 2
                        break
                    if rnd == 1 and kind == 0 and (
                            _ascii_ok(d, s, n) if symbolic else _utf8_ok(d, s, n)):
                        if (meta[1] + n > arena.shape[0] or meta[0] + 1 > log.shape[0]
                                or 2 * (meta[0] + 1) > (ht.shape[0] >> 2)):
                            return local_row, 1, n
                        _intern(_hash(d, s, n, sec ^ seed, size), d, s, n, size, sec, htp, hmask,
                                arenap, alimit, logp, metap, countsp)
                    mp = e
                if st != 0 or mp != mend:
                    break
    return count, 0, 0


@njit(cache=True)
def _dictionaries(log, count, arena, counts):
    """The interned strings in slot-major order, each slot's in first-seen
    order: (offsets, bytes, first string of each slot). Reads the log and the
    arena in order."""
    nslots = counts.shape[0]
    base = np.zeros(nslots + 1, np.int64)
    for s in range(nslots):
        base[s + 1] = base[s] + counts[s]
    offsets = np.zeros(count + 1, np.int64)
    next_ = base[:nslots].copy()
    for e in range(count):
        slot = log[e] >> 40
        offsets[next_[slot] + 1] = log[e] & 0xFFFFFFFFFF
        next_[slot] += 1
    for i in range(count):
        offsets[i + 1] += offsets[i]
    out = np.empty(offsets[count], np.uint8)
    next_[:] = base[:nslots]
    a = 0
    for e in range(count):
        slot = log[e] >> 40
        n = log[e] & 0xFFFFFFFFFF
        at = offsets[next_[slot]]
        next_[slot] += 1
        out[at:at + n] = arena[a:a + n]
        a += n
    return offsets, out, base


@njit(cache=True)
def _gather(tags, lut, starts, lens, xarena):
    """A binary child: offsets and bytes of the rows whose tag is in ``lut``."""
    n = tags.shape[0]
    offsets = np.zeros(n + 1, np.int64)
    for r in range(n):
        offsets[r + 1] = offsets[r] + (lens[r] if lut[tags[r]] else 0)
    out = np.empty(offsets[n], np.uint8)
    for r in range(n):
        if lut[tags[r]]:
            d = offsets[r]
            k = lens[r]
            s = starts[r]
            out[d:d + k] = xarena[s:s + k]
    return offsets, out


@njit(cache=True)
def _seen_tags(tags):
    """Per slot, the bits of the tags its rows hold."""
    seen = np.zeros(tags.shape[0], np.int64)
    for slot in range(tags.shape[0]):
        bits = np.int64(0)
        for r in range(tags.shape[1]):
            bits |= np.int64(1) << tags[slot, r]
        seen[slot] = bits
    return seen


@njit(cache=True)
def _bitmap(tags, lut):
    """The validity bitmap of the rows whose tag is in ``lut``, and their count."""
    n = tags.shape[0]
    out = np.zeros((n + 7) >> 3, np.uint8)
    count = 0
    for r in range(n):
        if lut[tags[r]]:
            out[r >> 3] |= np.uint8(1 << (r & 7))
            count += 1
    return out, count


@njit(cache=True)
def _bool_bitmap(tags, lut, values):
    """The data bitmap of a boolean child: set where the tag is in ``lut``
    and the value is true."""
    n = tags.shape[0]
    out = np.zeros((n + 7) >> 3, np.uint8)
    for r in range(n):
        if lut[tags[r]] and values[r] != 0:
            out[r >> 3] |= np.uint8(1 << (r & 7))
    return out



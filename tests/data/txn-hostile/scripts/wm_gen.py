#!/usr/bin/env python3
"""Hostile Kafka transaction capture generator (classic pcap, Ethernet/IPv4/TCP)."""
import struct, sys

# ---------- crc32c ----------
_T = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    _T.append(c)
def crc32c(b):
    c = 0xFFFFFFFF
    for x in b:
        c = _T[(c ^ x) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF

def i8(v): return struct.pack('>b', v)
def i16(v): return struct.pack('>h', v)
def i32(v): return struct.pack('>i', v)
def i64(v): return struct.pack('>q', v)
def s(v):
    if v is None: return i16(-1)
    b = v.encode(); return i16(len(b)) + b
def arr(items): return i32(len(items)) + b''.join(items)
def uvar(v):
    out = b''
    while True:
        if v < 0x80: return out + bytes([v])
        out += bytes([(v & 0x7F) | 0x80]); v >>= 7
def zz(v): return uvar((v << 1) ^ (v >> 63))

def batch(pid, epoch, seq, n, transactional=True, control=None, base_offset=0):
    recs = b''
    for k in range(n):
        body = i8(0) + zz(0) + zz(k) + zz(-1) + zz(3) + b'abc' + uvar(0)
        recs += zz(len(body)) + body
    attrs = (0x10 if transactional else 0)
    after_crc = i16(attrs) + i32(n - 1) + i64(1000) + i64(1000) + i64(pid) + i16(epoch) + i32(seq) + i32(n) + recs
    crc = crc32c(after_crc)
    rest = i32(0) + i8(2) + struct.pack('>I', crc) + after_crc
    return i64(base_offset) + i32(len(rest)) + rest

def req(key, ver, corr, client, body):
    b = i16(key) + i16(ver) + i32(corr) + s(client) + body
    return i32(len(b)) + b
def resp(corr, body):
    b = i32(corr) + body
    return i32(len(b)) + b

# ---------- messages ----------
def metadata_req(topics): return arr([s(t) for t in topics])  # v1
def metadata_resp(brokers, controller, topics):
    # brokers: [(node, host, port)], topics: {name: {part: leader}}
    b = arr([i32(n) + s(h) + i32(p) + s(None) for n, h, p in brokers]) + i32(controller)
    b += arr([i16(0) + s(name) + i8(0) + arr([i16(0) + i32(pi) + i32(l) + arr([i32(l)]) + arr([i32(l)]) for pi, l in parts.items()]) for name, parts in topics.items()])
    return b
def findcoord_req(key, ktype=1): return s(key) + i8(ktype)  # v1
def findcoord_resp(node, host, port): return i32(0) + i16(0) + s(None) + i32(node) + s(host) + i32(port)
def initpid_req(tid, timeout=60000): return s(tid) + i32(timeout)  # v1
def initpid_resp(pid, epoch, err=0): return i32(0) + i16(err) + i64(pid) + i16(epoch)
def addparts_req(tid, pid, epoch, topics):  # v1 topics {name:[parts]}
    return s(tid) + i64(pid) + i16(epoch) + arr([s(n) + arr([i32(p) for p in ps]) for n, ps in topics.items()])
def addparts_resp(topics, err=0):
    return i32(0) + arr([s(n) + arr([i32(p) + i16(err) for p in ps]) for n, ps in topics.items()])
def produce_req(tid, topics):  # v3 topics {name:{part: batchbytes}}
    return s(tid) + i16(-1) + i32(30000) + arr([s(n) + arr([i32(p) + i32(len(b)) + b for p, b in ps.items()]) for n, ps in topics.items()])
def produce_resp(topics, base=0):  # v3
    return arr([s(n) + arr([i32(p) + i16(0) + i64(base) + i64(-1) for p in ps]) for n, ps in topics.items()]) + i32(0)
def endtxn_req(tid, pid, epoch, commit): return s(tid) + i64(pid) + i16(epoch) + i8(1 if commit else 0)  # v1
def endtxn_resp(err=0): return i32(0) + i16(err)
def wtm_req(markers):  # v0 markers [(pid, epoch, commit, {topic:[parts]}, coord_epoch)]
    return arr([i64(pid) + i16(ep) + i8(1 if c else 0) + arr([s(n) + arr([i32(p) for p in ps]) for n, ps in t.items()]) + i32(ce) for pid, ep, c, t, ce in markers])
def wtm_resp(markers):  # [(pid, {topic:[parts]})]
    return arr([i64(pid) + arr([s(n) + arr([i32(p) + i16(0) for p in ps]) for n, ps in t.items()]) for pid, t in markers])

# ---------- pcap ----------
class Pcap:
    def __init__(self):
        self.recs = []
        self.t = 1_780_000_000.0
    def add(self, frame, dt=0.0001):
        self.t += dt
        sec = int(self.t); us = int(round((self.t - sec) * 1e6))
        if us >= 1000000: sec += 1; us -= 1000000
        self.recs.append(struct.pack('<IIII', sec, us, len(frame), len(frame)) + frame)
    def bytes(self):
        return struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 262144, 1) + b''.join(self.recs)

def csum(b):
    if len(b) % 2: b += b'\0'
    s_ = sum(struct.unpack('>%dH' % (len(b) // 2), b))
    while s_ >> 16: s_ = (s_ & 0xffff) + (s_ >> 16)
    return ~s_ & 0xffff

def ip4(a): return bytes(int(x) for x in a.split('.'))

class Conn:
    def __init__(self, pc, cip, cport, sip, sport, handshake=True):
        self.pc = pc; self.c = (cip, cport); self.s = (sip, sport)
        self.cseq = 1000; self.sseq = 5000
        if handshake:
            self.pkt(True, b'', 0x02); self.cseq += 1
            self.pkt(False, b'', 0x12); self.sseq += 1
            self.pkt(True, b'', 0x10)
    def pkt(self, from_client, data, flags=0x18, drop=False, seq=None):
        src, dst = (self.c, self.s) if from_client else (self.s, self.c)
        sq = self.cseq if from_client else self.sseq
        ak = self.sseq if from_client else self.cseq
        if seq is not None: sq = seq
        tcp = struct.pack('>HHIIBBHHH', src[1], dst[1], sq, ak if flags & 0x10 or flags == 0x12 else 0, 5 << 4, flags, 65535, 0, 0)
        iplen = 20 + len(tcp) + len(data)
        iph = struct.pack('>BBHHHBBH4s4s', 0x45, 0, iplen, 0, 0x4000, 64, 6, 0, ip4(src[0]), ip4(dst[0]))
        iph = iph[:10] + struct.pack('>H', csum(iph)) + iph[12:]
        pseudo = ip4(src[0]) + ip4(dst[0]) + struct.pack('>BBH', 0, 6, len(tcp) + len(data))
        tcp = tcp[:16] + struct.pack('>H', csum(pseudo + tcp + data)) + tcp[18:]
        eth = b'\x00\x00\x00\x00\x00\x02' + b'\x00\x00\x00\x00\x00\x01' + b'\x08\x00'
        if not drop:
            self.pc.add(eth + iph + tcp + data)
    def send(self, from_client, data, mss=1400, drop=False):
        for i in range(0, len(data), mss):
            chunk = data[i:i + mss]
            self.pkt(from_client, chunk, drop=drop)
            if from_client: self.cseq += len(chunk)
            else: self.sseq += len(chunk)
    def close(self):
        self.pkt(True, b'', 0x11); self.cseq += 1
        self.pkt(False, b'', 0x11); self.sseq += 1
        self.pkt(True, b'', 0x10)

BROKERS = [(0, '10.0.0.1', 9092), (1, '10.0.0.2', 9092), (2, '10.0.0.3', 9092)]

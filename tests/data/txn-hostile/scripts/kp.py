"""Minimal pcap + Kafka frame writer for hostile tests (non-flexible versions mostly)."""
import struct

def i8(v): return struct.pack('>b', v)
def i16(v): return struct.pack('>h', v)
def i32(v): return struct.pack('>i', v)
def i64(v): return struct.pack('>q', v)
def u32(v): return struct.pack('>I', v)
def boolean(v): return b'\x01' if v else b'\x00'
def s(x): b = x.encode(); return i16(len(b)) + b
def ns(x): return i16(-1) if x is None else s(x)
def arr(items, f): return i32(len(items)) + b''.join(f(x) for x in items)
def nbytes(b): return i32(-1) if b is None else i32(len(b)) + b
# flexible
def uvar(n):
    out = b''
    while True:
        b = n & 0x7f; n >>= 7
        if n: out += bytes([b | 0x80])
        else: return out + bytes([b])
def cs(x): b = x.encode(); return uvar(len(b) + 1) + b
def carr(items, f): return uvar(len(items) + 1) + b''.join(f(x) for x in items)
TAG0 = b'\x00'

def req_frame(api_key, ver, corr, client_id, body, flexible=False):
    h = i16(api_key) + i16(ver) + i32(corr) + ns(client_id)
    if flexible: h += TAG0
    p = h + body
    return i32(len(p)) + p

def resp_frame(corr, body, flexible=False):
    h = i32(corr) + (TAG0 if flexible else b'')
    p = h + body
    return i32(len(p)) + p

# ---- bodies
def init_pid_req(tid, timeout=60000):  # v1
    return ns(tid) + i32(timeout)
def init_pid_resp(pid, epoch, err=0):  # v1
    return i32(0) + i16(err) + i64(pid) + i16(epoch)

def add_parts_req(tid, pid, epoch, topics):  # v1: topics = [(name, [parts])]
    return s(tid) + i64(pid) + i16(epoch) + arr(topics, lambda t: s(t[0]) + arr(t[1], i32))
def add_parts_resp(topics, err=0):  # v1
    return i32(0) + arr(topics, lambda t: s(t[0]) + arr(t[1], lambda p: i32(p) + i16(err)))

def add_offsets_req(tid, pid, epoch, group):  # v0
    return s(tid) + i64(pid) + i16(epoch) + s(group)
def add_offsets_resp(err=0):
    return i32(0) + i16(err)

def txn_offset_commit_req(tid, group, pid, epoch, topics):  # v0: topics=[(name,[(p,off)])]
    return s(tid) + s(group) + i64(pid) + i16(epoch) + arr(topics, lambda t: s(t[0]) + arr(t[1], lambda p: i32(p[0]) + i64(p[1]) + ns(None)))
def txn_offset_commit_resp(topics, err=0):
    return i32(0) + arr(topics, lambda t: s(t[0]) + arr(t[1], lambda p: i32(p[0]) + i16(err)))

def end_txn_req(tid, pid, epoch, commit):  # v0-v2
    return s(tid) + i64(pid) + i16(epoch) + boolean(commit)
def end_txn_resp(err=0):
    return i32(0) + i16(err)
# EndTxn v5 (flexible)
def end_txn_req5(tid, pid, epoch, commit):
    return cs(tid) + i64(pid) + i16(epoch) + boolean(commit) + TAG0
def end_txn_resp5(err=0, pid=-1, epoch=-1):
    return i32(0) + i16(err) + i64(pid) + i16(epoch) + TAG0

def wtm_req(markers):  # v0: markers=[(pid, epoch, commit, [(topic,[parts])], coord_epoch)]
    return arr(markers, lambda m: i64(m[0]) + i16(m[1]) + boolean(m[2]) +
               arr(m[3], lambda t: s(t[0]) + arr(t[1], i32)) + i32(m[4]))
def wtm_resp(markers):  # markers=[(pid, [(topic, [(p, err)])])]
    return arr(markers, lambda m: i64(m[0]) + arr(m[1], lambda t: s(t[0]) + arr(t[1], lambda p: i32(p[0]) + i16(p[1]))))
# WTM v1 flexible with optional v2 transaction_version
def wtm_req_flex(markers, v2=False):
    def mk(m):
        b = i64(m[0]) + i16(m[1]) + boolean(m[2]) + carr(m[3], lambda t: cs(t[0]) + carr(t[1], i32) + TAG0) + i32(m[4])
        if v2: b += i8(m[5] if len(m) > 5 else 2)
        return b + TAG0
    return carr(markers, mk) + TAG0
def wtm_resp_flex(markers):
    return carr(markers, lambda m: i64(m[0]) + carr(m[1], lambda t: cs(t[0]) + carr(t[1], lambda p: i32(p[0]) + i16(p[1]) + TAG0) + TAG0) + TAG0) + TAG0

def batch(pid, epoch, nrec=1, transactional=True, control=False, base_offset=0, last_delta=None):
    attrs = (0x10 if transactional else 0) | (0x20 if control else 0)
    if last_delta is None: last_delta = nrec - 1
    # records: give minimal bytes (not parsed deeply hopefully)
    recs = b''
    body = i32(0) + i8(2)  # partition leader epoch, magic
    after_crc = i16(attrs) + i32(last_delta) + i64(0) + i64(0) + i64(pid) + i16(epoch) + i32(0) + i32(nrec) + recs
    body += u32(0) + after_crc
    return i64(base_offset) + i32(len(body)) + body

def produce_req(tid, topics, acks=-1):  # v3: topics=[(name,[(part, recordsbytes)])]
    return ns(tid) + i16(acks) + i32(30000) + arr(topics, lambda t: s(t[0]) + arr(t[1], lambda p: i32(p[0]) + nbytes(p[1])))
def produce_resp(topics):  # v3: topics=[(name,[(part, err, base_offset)])]
    return arr(topics, lambda t: s(t[0]) + arr(t[1], lambda p: i32(p[0]) + i16(p[1]) + i64(p[2]) + i64(-1))) + i32(0)

def fetch_req(topics, isolation=1):  # v4: topics=[(name,[part])]
    return i32(-1) + i32(500) + i32(1) + i32(1 << 20) + i8(isolation) + arr(topics, lambda t: s(t[0]) + arr(t[1], lambda p: i32(p) + i64(0) + i32(1 << 20)))
def fetch_resp(topics):  # v4: topics=[(name,[(part, hwm, lso)])]
    return i32(0) + arr(topics, lambda t: s(t[0]) + arr(t[1], lambda p: i32(p[0]) + i16(0) + i64(p[1]) + i64(p[2]) + i32(-1) + nbytes(None)))

def metadata_req(topics=None):  # v1
    return i32(-1) if topics is None else arr(topics, s)
def metadata_resp(brokers, topics):  # v1: brokers=[(id,host,port)], topics=[(name,[(part,leader)])]
    return (arr(brokers, lambda b: i32(b[0]) + s(b[1]) + i32(b[2]) + ns(None)) + i32(0) +
            arr(topics, lambda t: i16(0) + s(t[0]) + boolean(False) + arr(t[1], lambda p: i16(0) + i32(p[0]) + i32(p[1]) + arr([p[1]], i32) + arr([p[1]], i32))))

def find_coord_req(key):  # v0
    return s(key)
def find_coord_resp(node, host, port):  # v0
    return i16(0) + i32(node) + s(host) + i32(port)

API = dict(produce=0, fetch=1, metadata=3, find_coord=10, init_pid=22, add_parts=24, add_offsets=25,
           end_txn=26, wtm=27, txn_offset_commit=28)

# ---- pcap
def csum(b):
    if len(b) % 2: b += b'\0'
    s_ = sum(struct.unpack('>%dH' % (len(b) // 2), b))
    while s_ >> 16: s_ = (s_ & 0xffff) + (s_ >> 16)
    return (~s_) & 0xffff

def ip4(a): return bytes(int(x) for x in a.split('.'))

class Pcap:
    def __init__(self, path):
        self.f = open(path, 'wb')
        self.f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 262144, 1))
        self.frames = 0
    def pkt(self, t_us, src, sport, dst, dport, seq, ack, flags, payload=b''):
        tcp = struct.pack('>HHIIBBHHH', sport, dport, seq & 0xffffffff, ack & 0xffffffff, 5 << 4, flags, 65535, 0, 0)
        ip = struct.pack('>BBHHHBBH4s4s', 0x45, 0, 20 + len(tcp) + len(payload), 0, 0x4000, 64, 6, 0, ip4(src), ip4(dst))
        ip = ip[:10] + struct.pack('>H', csum(ip)) + ip[12:]
        eth = b'\x02\0\0\0\0\x02' + b'\x02\0\0\0\0\x01' + b'\x08\x00'
        data = eth + ip + tcp + payload
        secs, us = divmod(t_us, 1_000_000)
        if secs < 0: secs, us = 0, 0
        self.f.write(struct.pack('<IIII', secs, us, len(data), len(data)) + data)
        self.frames += 1
        return self.frames
    def close(self): self.f.close()

SYN, ACK, PSH, FIN = 0x02, 0x10, 0x08, 0x01
MSS = 60000

class Conn:
    def __init__(self, pcap, cport, sport, t_us, cip='10.0.0.1', sip='127.0.0.1', handshake=True):
        self.p, self.c, self.s, self.cip, self.sip = pcap, cport, sport, cip, sip
        self.cseq, self.sseq = 1000, 5000
        if handshake:
            pcap.pkt(t_us, cip, cport, sip, sport, self.cseq, 0, SYN)
            pcap.pkt(t_us, sip, sport, cip, cport, self.sseq, self.cseq + 1, SYN | ACK)
            self.cseq += 1; self.sseq += 1
            pcap.pkt(t_us, cip, cport, sip, sport, self.cseq, self.sseq, ACK)
    def send(self, t_us, data, to_server=True):
        last = None
        for i in range(0, len(data), MSS):
            chunk = data[i:i + MSS]
            if to_server:
                last = self.p.pkt(t_us, self.cip, self.c, self.sip, self.s, self.cseq, self.sseq, PSH | ACK, chunk)
                self.cseq += len(chunk)
            else:
                last = self.p.pkt(t_us, self.sip, self.s, self.cip, self.c, self.sseq, self.cseq, PSH | ACK, chunk)
                self.sseq += len(chunk)
        return last

class Client:
    """One connection; sends request then response."""
    def __init__(self, pcap, cport, sport, t_us, client_id='prod', cip='10.0.0.1', sip='127.0.0.1'):
        self.conn = Conn(pcap, cport, sport, t_us, cip, sip)
        self.client_id = client_id
        self.corr = 0
    def x(self, t_us, api, ver, body, rbody, latency=100, flexible=False, rflexible=None, corr=None, rcorr=None):
        if rflexible is None: rflexible = flexible
        c = self.corr if corr is None else corr
        self.corr += 1
        f1 = self.conn.send(t_us, req_frame(API[api], ver, c, self.client_id, body, flexible))
        f2 = None
        if rbody is not None:
            f2 = self.conn.send(t_us + latency, resp_frame(c if rcorr is None else rcorr, rbody, rflexible), to_server=False)
        return f1, f2

def cns(x): return b'\x00' if x is None else cs(x)
def init_pid_req3(tid, timeout, pid, epoch):  # v3 flexible
    return cns(tid) + i32(timeout) + i64(pid) + i16(epoch) + TAG0
def init_pid_resp3(pid, epoch, err=0):
    return i32(0) + i16(err) + i64(pid) + i16(epoch) + TAG0

"""A capture writer for hostile reviews (beside kp.py's): link types, IPv4 and IPv6, chosen
sequence numbers, segmenting; packets written in the order given, each with its own time."""
import struct, sys
from kp import *  # the Kafka encoders

T0 = 1_767_225_600_000_000
LT_EN10MB, LT_RAW, LT_SLL, LT_SLL2 = 1, 101, 113, 276

def ip6(a):
    import ipaddress; return ipaddress.IPv6Address(a).packed

class W:
    def __init__(self, path, linktype=LT_EN10MB, snaplen=262144):
        self.f = open(path, 'wb'); self.lt = linktype
        self.f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, snaplen, linktype))
        self.frames = 0; self.pkts = []
    def raw(self, t_us, data, wirelen=None, meta=None):
        self.pkts.append(dict(t=t_us, data=data, wl=wirelen, meta=meta))
        self.frames += 1; return self.frames
    def tcp(self, t_us, src, sport, dst, dport, seq, ack, flags, payload=b'', win=65535, vlan=None, link=None):
        tcp = struct.pack('>HHIIBBHHH', sport, dport, seq & 0xffffffff, ack & 0xffffffff, 5 << 4, flags, win, 0, 0)
        if ':' in src:
            ip = struct.pack('>IHBB16s16s', 0x60000000, len(tcp) + len(payload), 6, 64, ip6(src), ip6(dst))
            et = 0x86dd
        else:
            ip = struct.pack('>BBHHHBBH4s4s', 0x45, 0, 20 + len(tcp) + len(payload), 0, 0x4000, 64, 6, 0, ip4(src), ip4(dst))
            ip = ip[:10] + struct.pack('>H', csum(ip)) + ip[12:]
            et = 0x0800
        l3 = ip + tcp + payload
        lt = self.lt if link is None else link
        if lt == LT_EN10MB:
            if vlan is not None:
                hdr = b'\x02\0\0\0\0\x02' + b'\x02\0\0\0\0\x01' + struct.pack('>HHH', 0x8100, vlan, et)
            else:
                hdr = b'\x02\0\0\0\0\x02' + b'\x02\0\0\0\0\x01' + struct.pack('>H', et)
        elif lt == LT_RAW:
            hdr = b''
        elif lt == LT_SLL:
            hdr = struct.pack('>HHH8sH', 0, 772, 6, b'\x02\0\0\0\0\x01\0\0', et)
        elif lt == LT_SLL2:
            hdr = struct.pack('>HHIHBB8s', et, 0, 1, 772, 0, 6, b'\x02\0\0\0\0\x01\0\0')
        return self.raw(t_us, hdr + l3, meta=(src, sport, dst, dport, seq, ack, flags, payload))
    def close(self):
        for p in self.pkts:
            secs, us = divmod(p['t'], 1_000_000)
            self.f.write(struct.pack('<IIII', secs, us, len(p['data']), p['wl'] or len(p['data'])) + p['data'])
        self.f.close()

SYN, ACK, PSH, FIN, RST = 0x02, 0x10, 0x08, 0x01, 0x04

class C:
    """A TCP connection with explicit ISNs and segmenting control."""
    def __init__(self, w, cip, cport, sip, sport, t, cisn=1000, sisn=5000, hs=True, vlan=None, link=None):
        self.w, self.cip, self.cp, self.sip, self.sp = w, cip, cport, sip, sport
        self.cseq, self.sseq = cisn, sisn
        self.vlan, self.link = vlan, link
        self.corr = 0
        if hs:
            self.pk(t, True, self.cseq, 0, SYN)
            self.pk(t, False, self.sseq, self.cseq + 1, SYN | ACK)
            self.cseq += 1; self.sseq += 1
            self.pk(t, True, self.cseq, self.sseq, ACK)
    def pk(self, t, c2s, seq, ack, flags, payload=b'', win=65535):
        if c2s:
            return self.w.tcp(t, self.cip, self.cp, self.sip, self.sp, seq, ack, flags, payload, win, self.vlan, self.link)
        return self.w.tcp(t, self.sip, self.sp, self.cip, self.cp, seq, ack, flags, payload, win, self.vlan, self.link)
    def send(self, t, data, c2s=True, seg=60000):
        last = None
        for i in range(0, len(data), seg):
            ch = data[i:i+seg]
            if c2s:
                last = self.pk(t, True, self.cseq, self.sseq, PSH | ACK, ch); self.cseq += len(ch)
            else:
                last = self.pk(t, False, self.sseq, self.cseq, PSH | ACK, ch); self.sseq += len(ch)
        return last
    def req(self, api, ver, body, cid='prod', corr=None, flexible=False):
        c = self.corr if corr is None else corr
        if corr is None: self.corr += 1
        return c, req_frame(API[api], ver, c, cid, body, flexible)
    def x(self, t, api, ver, body, rbody, cid='prod', lat=100, flexible=False, seg=60000, rcorr=None):
        c, q = self.req(api, ver, body, cid, flexible=flexible)
        f1 = self.send(t, q, True, seg)
        f2 = None
        if rbody is not None:
            f2 = self.send(t + lat, resp_frame(c if rcorr is None else rcorr, rbody, flexible), False, seg)
        return f1, f2
    def fin(self, t):
        self.pk(t, True, self.cseq, self.sseq, FIN | ACK); self.cseq += 1
        self.pk(t, False, self.sseq, self.cseq, FIN | ACK); self.sseq += 1
        self.pk(t, True, self.cseq, self.sseq, ACK)

def batch_seq(pid, epoch, nrec=1, seq=0, transactional=True, base_offset=0, control=False):
    attrs = (0x10 if transactional else 0) | (0x20 if control else 0)
    body = i32(0) + i8(2)
    after_crc = i16(attrs) + i32(nrec - 1) + i64(0) + i64(0) + i64(pid) + i16(epoch) + i32(seq) + i32(nrec)
    body += u32(0) + after_crc
    return i64(base_offset) + i32(len(body)) + body

BROKERS = [(0,'127.0.0.1',9092),(1,'127.0.0.2',9092),(2,'127.0.0.3',9092)]

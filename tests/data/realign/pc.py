#!/usr/bin/env python3
# pcap helper: list | bump FRAME DELTA | split1 (each TCP payload -> 1-byte segments) | cut FRAME (drop packet)
import struct, sys
def read(p):
    d=open(p,'rb').read(); gh=d[:24]; i=24; pk=[]
    while i+16<=len(d):
        ts1,ts2,cl,ol=struct.unpack('<IIII',d[i:i+16]); pk.append([d[i:i+16],bytearray(d[i+16:i+16+cl])]); i+=16+cl
    return gh,pk
def write(p,gh,pk):
    with open(p,'wb') as f:
        f.write(gh)
        for h,b in pk:
            f.write(struct.pack('<IIII',*struct.unpack('<II',h[:8]),len(b),len(b))+bytes(b))
def parts(b):
    ip=14; ihl=(b[ip]&15)*4; tcp=ip+ihl; off=(b[tcp+12]>>4)*4; return ip,tcp,tcp+off
def cmd():
    a=sys.argv; gh,pk=read(a[2])
    if a[1]=='list':
        for n,(h,b) in enumerate(pk,1):
            ip,tcp,pl=parts(b); sp,dp=struct.unpack('>HH',b[tcp:tcp+4]); pay=b[pl:]
            print(n,sp,dp,len(pay),pay[:12].hex())
        return
    out=a[3]
    if a[1]=='bump':
        n=int(a[4]); dl=int(a[5]); b=pk[n-1][1]; ip,tcp,pl=parts(b)
        s=struct.unpack('>i',b[pl:pl+4])[0]; b[pl:pl+4]=struct.pack('>i',s+dl)
    elif a[1]=='split1':
        only=int(a[4]) if len(a)>4 else 0  # only split this port's source (0=all)
        np=[]
        for h,b in pk:
            ip,tcp,pl=parts(b); pay=b[pl:]; sp=struct.unpack('>H',b[tcp:tcp+2])[0]
            if len(pay)<=1 or (only and sp!=only): np.append([h,b]); continue
            seq=struct.unpack('>I',b[tcp+4:tcp+8])[0]
            for k in range(len(pay)):
                nb=bytearray(b[:pl])+pay[k:k+1]
                struct.pack_into('>H',nb,ip+2,len(nb)-14); struct.pack_into('>H',nb,ip+10,0)
                struct.pack_into('>I',nb,tcp+4,(seq+k)&0xffffffff); struct.pack_into('>H',nb,tcp+16,0)
                np.append([h,nb])
        pk=np
    elif a[1]=='order':
        pk=[[struct.pack('<IIII',1767225600,1000+100*k,0,0),pk[int(i)-1][1]] for k,i in enumerate(a[4].split(','))]
    elif a[1]=='fixack':  # data packets from port a[4] all carry the ack of the first one
        port=int(a[4]); ack=None
        for h,b in pk:
            ip,tcp,pl=parts(b)
            if struct.unpack('>H',b[tcp:tcp+2])[0]==port and len(b)>pl:
                if ack is None: ack=b[tcp+8:tcp+12]
                b[tcp+8:tcp+12]=ack
    elif a[1]=='splitat':  # split packet a[4]'s payload in two at byte a[5]
        n=int(a[4]); k=int(a[5]); h,b=pk[n-1]; ip,tcp,pl=parts(b); pay=b[pl:]; seq=struct.unpack('>I',b[tcp+4:tcp+8])[0]; new=[]
        for j,(lo,hi) in enumerate(((0,k),(k,len(pay)))):
            nb=bytearray(b[:pl])+pay[lo:hi]; struct.pack_into('>H',nb,ip+2,len(nb)-14); struct.pack_into('>H',nb,ip+10,0)
            struct.pack_into('>I',nb,tcp+4,(seq+lo)&0xffffffff); struct.pack_into('>H',nb,tcp+16,0); new.append([h,nb])
        pk[n-1:n]=new
    elif a[1]=='append':  # append hex bytes to packet a[4]'s payload (a genuine longer frame): its size prefix grows, later seq/ack shift
        n=int(a[4]); extra=bytes.fromhex(a[5]); h,b=pk[n-1]; ip,tcp,pl=parts(b); sp=struct.unpack('>H',b[tcp:tcp+2])[0]
        s0=struct.unpack('>i',b[pl:pl+4])[0]; b[pl:pl+4]=struct.pack('>i',s0+len(extra)); b+=extra
        struct.pack_into('>H',b,ip+2,len(b)-14); struct.pack_into('>H',b,ip+10,0); struct.pack_into('>H',b,tcp+16,0)
        for h2,b2 in pk[n:]:
            ip2,tcp2,pl2=parts(b2); sp2=struct.unpack('>H',b2[tcp2:tcp2+2])[0]
            fld=tcp2+4 if sp2==sp else tcp2+8
            v=struct.unpack('>I',b2[fld:fld+4])[0]; struct.pack_into('>I',b2,fld,(v+len(extra))&0xffffffff)
    elif a[1]=='cut':
        n=int(a[4]); del pk[n-1]
    write(out,gh,pk)
cmd()

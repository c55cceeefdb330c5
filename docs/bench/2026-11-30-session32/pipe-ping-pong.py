import os, time, sys
r1,w1=os.pipe(); r2,w2=os.pipe()
dur=float(sys.argv[1])
pid=os.fork()
if pid==0:
    os.sched_setaffinity(0,{1})
    while True:
        b=os.read(r1,1)
        if b==b'q': os._exit(0)
        os.write(w2,b'x')
os.sched_setaffinity(0,{0})
end=time.time()+dur
while time.time()<end:
    t=time.time(); n=0; c0=time.process_time()
    while time.time()-t<1.0:
        for _ in range(100):
            os.write(w1,b'x'); os.read(r2,1)
        n+=100
    print(f"{time.strftime('%H:%M:%S')} {n} rt/s cpu {((time.process_time()-c0)/n)*1e6:.1f} us/rt", flush=True)
os.write(w1,b'q')

#!/usr/bin/env python3
"""Why verify freezes the candidate's process while it times the reference (docs/verify.md, "What real rewrites
may do"): a process that has just run a torch.compile'd kernel on the CPU (its OpenMP pool waits actively after
each call) beside one that times an eager torch.softmax of 9 x 96, the second's fastest of 50 calls with the
first running and stopped (SIGSTOP), twice each. Prints one line per measurement.

    TORCHINDUCTOR_COMPILE_THREADS=1 python3 bench/verify_spin_probe.py
"""
import os, time, torch, sys, signal, multiprocessing as mp
def cand(q_go, q_done):
    @torch.compile
    def sm(x):
        e=(x-x.amax(-1,keepdim=True)).exp(); return e/e.sum(-1,keepdim=True)
    sm(torch.randn(9,96)); sm(torch.randn(9,96))
    q_done.put(os.getpid())
    while True:
        cmd=q_go.get()
        if cmd=="stop": return
        for _ in range(10): sm(torch.randn(9,96))
        q_done.put("ok")
def t_eager(x, n=50):
    best=1e9
    for _ in range(n):
        t=time.perf_counter(); torch.softmax(x,-1); best=min(best,time.perf_counter()-t)
    return best*1e3
if __name__=="__main__":
    mp.set_start_method("spawn")
    q_go, q_done = mp.Queue(), mp.Queue()
    p=mp.Process(target=cand, args=(q_go,q_done)); p.start()
    pid=q_done.get()
    x=torch.randn(9,96)
    for stop in (False, True, False, True):
        q_go.put("go"); q_done.get()
        if stop: os.kill(pid, signal.SIGSTOP)
        ms=t_eager(x)
        if stop: os.kill(pid, signal.SIGCONT)
        print("stopped" if stop else "running", round(ms,4), "ms")
    q_go.put("stop"); p.join()

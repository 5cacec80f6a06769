package fleettest

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Fault is what a Proxy does to a connection.
type Fault int32

const (
	// Pass forwards bytes both ways.
	Pass Fault = iota
	// Slow forwards nothing back for the proxy's delay, then passes.
	Slow
	// Garbage answers every request with bytes that no protocol expects.
	Garbage
	// Reset closes every connection at once.
	Reset
)

// Proxy is a TCP proxy on a loopback port in front of a server, which
// injects a fault that the test sets.
type Proxy struct {
	Addr  string
	fault atomic.Int32
	delay time.Duration
	l     net.Listener
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]bool
}

// StartProxy starts a proxy to target; Slow delays by delay.
func StartProxy(t testing.TB, target string, delay time.Duration) *Proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy: %v", err)
	}
	p := &Proxy{Addr: l.Addr().String(), delay: delay, l: l, conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.serve(target)
	t.Cleanup(p.close)
	return p
}

// Set changes the fault for new and open connections.
func (p *Proxy) Set(f Fault) { p.fault.Store(int32(f)) }

func (p *Proxy) close() {
	p.l.Close()
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *Proxy) track(c net.Conn, add bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if add {
		p.conns[c] = true
	} else {
		delete(p.conns, c)
	}
}

func (p *Proxy) serve(target string) {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.track(c, true)
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer p.track(c, false)
			defer c.Close()
			p.handle(c, target)
		}()
	}
}

func (p *Proxy) handle(c net.Conn, target string) {
	switch Fault(p.fault.Load()) {
	case Reset:
		return
	case Garbage:
		buf := make([]byte, 4096)
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
			if _, err := c.Write([]byte("\x00\xffNOT A PROTOCOL\r\n\x07garbage\r\n")); err != nil {
				return
			}
		}
	}
	s, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	p.track(s, true)
	defer p.track(s, false)
	defer s.Close()
	done := make(chan struct{}, 2)
	go func() { io.Copy(s, c); done <- struct{}{} }()
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := s.Read(buf)
			if n > 0 {
				if Fault(p.fault.Load()) == Slow {
					time.Sleep(p.delay)
				}
				if _, werr := c.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		done <- struct{}{}
	}()
	<-done
}

package follow

import "time"

// Clocks are the tickers of an engine that follows the cluster (churn,
// leases): Tick every second, for what ages between events, and Live every
// liveEvery when a live view is asked for (a nil channel, which never
// fires, otherwise). Stop them when the engine is done.
type Clocks struct {
	Tick, Live <-chan time.Time
	tickers    []*time.Ticker
}

// NewClocks starts the clocks; live says whether a live view is asked for.
func NewClocks(live bool, liveEvery time.Duration) *Clocks {
	c := &Clocks{}
	c.Tick = c.start(time.Second)
	if live {
		c.Live = c.start(liveEvery)
	}
	return c
}

func (c *Clocks) start(d time.Duration) <-chan time.Time {
	t := time.NewTicker(d)
	c.tickers = append(c.tickers, t)
	return t.C
}

// Stop stops the clocks.
func (c *Clocks) Stop() {
	for _, t := range c.tickers {
		t.Stop()
	}
}

// Drain hands fn the events still buffered in events once the stream that
// sent them has returned (its done channel said so): they were seen before
// the end and count, and nothing more is sent.
func Drain(events <-chan Event, fn func(Event)) {
	for len(events) > 0 {
		fn(<-events)
	}
}

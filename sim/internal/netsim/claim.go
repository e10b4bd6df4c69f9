package netsim

import "math"

// claimMin is the number of links from which a path is claimed.
const claimMin = 16

// A claim lists the flows of a path of many links (a flow group across
// many ranks) on the links it shares, not on every link. A link is hot
// when another claimed path crosses it or a flow of a path not claimed is
// listed on it, cold otherwise. A claimed path's flows are listed on its
// hot links and on a virtual link standing for all its cold links: only
// its own flows cross those, each with weight w(l), so together they allow
//
//	sum of the flows' rates ≤ min over cold links l of B(l)/w(l)
//
// which is the virtual link's bandwidth, each flow crossing it once. The
// constraints, hence the rates, are those of the path's links; a flow
// group alone on its links costs a few links per start and finish instead
// of all of them. A path stays claimed; links turn hot and cold as other
// flows come and go.
type claim struct {
	p      *Path
	v      *Link   // the virtual link
	eff    []Use   // what the flows are listed on: v, then the hot links
	effUse []int32 // by eff: index in p.uses, -1 for v
	at     []int32 // by p.uses: index in eff, -1 when cold
	vbw    float64 // min over cold links of B/w; +Inf without any
	vcount int     // cold links at vbw
}

// claimRef is a claimed path crossing a link: its claim and the link's
// index in the path's uses.
type claimRef struct {
	c *claim
	u int32
}

// eff returns the links a listed flow is on, with weights.
func (f *Flow) eff() []Use {
	if c := f.path.claim; c != nil {
		return c.eff
	}
	return f.path.uses
}

// claimPath claims p, which has no listed flow yet.
func (n *Network) claimPath(p *Path) {
	s := &n.ls
	v := &Link{name: "virtual", bw: math.Inf(1), id: -1, net: n}
	n.addSlot(v)
	c := &claim{p: p, v: v, at: make([]int32, len(p.uses)), vbw: math.Inf(1)}
	c.eff, c.effUse = append(c.eff, Use{Link: v, Weight: 1}), append(c.effUse, -1)
	p.claim = c
	for i, u := range p.uses {
		id := u.Link.slot
		s.claims[id] = append(s.claims[id], claimRef{c, int32(i)})
		if len(s.claims[id]) == 2 && s.nfree[id] == 0 {
			o := s.claims[id][0]
			n.setHot(o.c, o.u, true)
		}
		c.at[i] = -1
		if len(s.claims[id]) >= 2 || s.nfree[id] > 0 {
			c.at[i] = int32(len(c.eff))
			c.eff, c.effUse = append(c.eff, u), append(c.effUse, int32(i))
		} else {
			c.addCold(u)
		}
	}
	n.setVirtual(c)
}

// freeJoins counts a flow of a path not claimed joining link id, which
// turns hot for the path claiming it, if one does.
func (n *Network) freeJoins(id int32) {
	s := &n.ls
	if s.nfree[id] == 0 && len(s.claims[id]) == 1 {
		o := s.claims[id][0]
		n.setHot(o.c, o.u, true)
	}
	s.nfree[id]++
}

// freeLeaves counts a flow of a path not claimed leaving link id. If the
// link turns cold for the path claiming it, that path's moving flows are
// recomputed (they may speed up) from the virtual link.
func (n *Network) freeLeaves(id int32) {
	s := &n.ls
	if s.nfree[id]--; s.nfree[id] > 0 || len(s.claims[id]) != 1 {
		return
	}
	o := s.claims[id][0]
	n.setHot(o.c, o.u, false)
	if v := o.c.v.slot; len(s.flows[v]) > 0 {
		s.bind[v] = true
		n.seeds = append(n.seeds, v)
	}
}

// setHot turns use i of c's path hot or cold, listing c's moving flows on
// the link or taking them off. Their rates do not change: the link's
// constraint moves between the link and the virtual link.
func (n *Network) setHot(c *claim, i int32, hot bool) {
	s := &n.ls
	u := c.p.uses[i]
	id := u.Link.slot
	movers := s.flows[c.v.slot]
	if hot {
		k := int32(len(c.eff))
		c.at[i] = k
		c.eff, c.effUse = append(c.eff, u), append(c.effUse, i)
		w := float64(u.Weight)
		for _, r := range movers {
			f := r.f
			f.pos = append(f.pos, int32(len(s.flows[id])))
			s.flows[id] = append(s.flows[id], flowRef{f, k})
			s.wsum[id] += w
			s.load[id] += float64(w * f.rate)
		}
		if len(movers) > 0 && s.load[id] > float64(s.bw[id]*(1-bindMargin)) {
			s.bind[id] = true
		}
		c.removeCold(u)
		n.setVirtual(c)
		return
	}
	// Only c's flows are listed on the link.
	clear(s.flows[id])
	s.flows[id] = s.flows[id][:0]
	s.wsum[id], s.load[id], s.fresh[id], s.bind[id] = 0, 0, 0, false
	k, last := c.at[i], int32(len(c.eff)-1)
	if k != last {
		moved := c.eff[last].Link.slot
		for _, r := range movers {
			f := r.f
			f.pos[k] = f.pos[last]
			s.flows[moved][f.pos[k]].u = k
		}
		c.eff[k], c.effUse[k] = c.eff[last], c.effUse[last]
		c.at[c.effUse[k]] = k
	}
	for _, r := range movers {
		r.f.pos = r.f.pos[:last]
	}
	c.eff, c.effUse = c.eff[:last], c.effUse[:last]
	c.at[i] = -1
	c.addCold(u)
	n.setVirtual(c)
}

// addCold adds a cold link to the virtual link's minimum.
func (c *claim) addCold(u Use) {
	switch x := u.Link.bw / float64(u.Weight); {
	case x < c.vbw:
		c.vbw, c.vcount = x, 1
	case x == c.vbw:
		c.vcount++
	}
}

// removeCold takes a link that turned hot out of the minimum.
func (c *claim) removeCold(u Use) {
	if u.Link.bw/float64(u.Weight) != c.vbw {
		return
	}
	if c.vcount--; c.vcount > 0 {
		return
	}
	c.vbw = math.Inf(1)
	for j, v := range c.p.uses {
		if c.at[j] < 0 {
			c.addCold(v)
		}
	}
}

// setVirtual sets the virtual link's bandwidth to the cold links' minimum
// and binds it if its flows come within bindMargin of it.
func (n *Network) setVirtual(c *claim) {
	s := &n.ls
	id := c.v.slot
	c.v.bw, s.bw[id] = c.vbw, c.vbw
	if len(s.flows[id]) > 0 && s.load[id] > float64(c.vbw*(1-bindMargin)) {
		s.bind[id] = true
	}
}

// coldLoad returns the load that claimed paths for which l is cold put on
// it: their flows' rates times their weights.
func (n *Network) coldLoad(l *Link) float64 {
	s := &n.ls
	x := 0.0
	for _, r := range s.claims[l.slot] {
		if r.c.at[r.u] < 0 {
			x += float64(float64(r.c.p.uses[r.u].Weight) * s.load[r.c.v.slot])
		}
	}
	return x
}

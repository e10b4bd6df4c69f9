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

// claimOrNot claims p, which has no listed flow yet, unless most of its
// links are already hot when its first flow moves: listed on them, its
// flows would cost as much as on a path not claimed, plus the virtual
// link (a parameter server's pushes cross the servers' NICs that every
// worker crosses). Such a path is never claimed; the choice changes how
// flows are listed, not the constraints.
func (n *Network) claimOrNot(p *Path) {
	s := &n.ls
	hot := 0
	for _, u := range p.uses {
		if r := &s.l[u.slot]; r.ncl > 0 || r.nfree > 0 {
			hot++
		}
	}
	if 2*hot > len(p.uses) {
		p.unclaimed = true
		return
	}
	n.claimPath(p)
}

// claimPath claims p, which has no listed flow yet.
func (n *Network) claimPath(p *Path) {
	s := &n.ls
	v := &Link{name: "virtual", bw: math.Inf(1), id: -1, net: n}
	n.addSlot(v)
	c := &claim{p: p, v: v, at: make([]int32, len(p.uses)), vbw: math.Inf(1)}
	c.eff, c.effUse = append(c.eff, Use{Link: v, Weight: 1, slot: v.slot}), append(c.effUse, -1)
	p.claim = c
	for i, u := range p.uses {
		id := u.slot
		s.l[id].claims = append(s.l[id].claims, claimRef{c, int32(i)})
		if s.l[id].ncl < 2 {
			s.l[id].ncl++
		}
		if len(s.l[id].claims) == 2 && s.l[id].nfree == 0 {
			o := s.l[id].claims[0]
			n.setHot(o.c, o.u, true)
		}
		c.at[i] = -1
		if len(s.l[id].claims) >= 2 || s.l[id].nfree > 0 {
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
	if s.l[id].nfree == 0 && s.l[id].ncl == 1 {
		o := s.l[id].claims[0]
		n.setHot(o.c, o.u, true)
	}
	s.l[id].nfree++
}

// freeLeaves counts a flow of a path not claimed leaving link id. If the
// link turns cold for the path claiming it, that path's moving flows are
// recomputed (they may speed up) from the virtual link.
func (n *Network) freeLeaves(id int32) {
	s := &n.ls
	if s.l[id].nfree--; s.l[id].nfree > 0 || s.l[id].ncl != 1 {
		return
	}
	o := s.l[id].claims[0]
	n.setHot(o.c, o.u, false)
	if v := o.c.v.slot; len(s.l[v].flows) > 0 {
		s.l[v].bind = true
		n.seeds = append(n.seeds, v)
	}
}

// setHot turns use i of c's path hot or cold, listing c's moving flows on
// the link or taking them off. Their rates do not change: the link's
// constraint moves between the link and the virtual link.
func (n *Network) setHot(c *claim, i int32, hot bool) {
	s := &n.ls
	u := c.p.uses[i]
	id := u.slot
	movers := s.l[c.v.slot].flows
	if hot {
		k := int32(len(c.eff))
		c.at[i] = k
		c.eff, c.effUse = append(c.eff, u), append(c.effUse, i)
		w := float64(u.Weight)
		for _, r := range movers {
			f := r.f
			f.pos = append(f.pos, int32(len(s.l[id].flows)))
			s.l[id].flows = append(s.l[id].flows, flowRef{f, k, int32(u.Weight)})
			s.l[id].wsum += w
			s.l[id].load += float64(w * f.rate)
		}
		if len(movers) > 0 && s.l[id].load > float64(s.l[id].bw*(1-bindMargin)) {
			s.l[id].bind = true
		}
		c.removeCold(u)
		n.setVirtual(c)
		return
	}
	// Only c's flows are listed on the link.
	clear(s.l[id].flows)
	s.l[id].flows = s.l[id].flows[:0]
	s.l[id].wsum, s.l[id].load, s.l[id].fresh, s.l[id].bind = 0, 0, 0, false
	k, last := c.at[i], int32(len(c.eff)-1)
	if k != last {
		moved := c.eff[last].slot
		for _, r := range movers {
			f := r.f
			f.pos[k] = f.pos[last]
			s.l[moved].flows[f.pos[k]].u = k
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
	c.v.bw, s.l[id].bw = c.vbw, c.vbw
	if len(s.l[id].flows) > 0 && s.l[id].load > float64(c.vbw*(1-bindMargin)) {
		s.l[id].bind = true
	}
}

// coldLoad returns the load that claimed paths for which l is cold put on
// it: their flows' rates times their weights.
func (n *Network) coldLoad(l *Link) float64 {
	s := &n.ls
	x := 0.0
	for _, r := range s.l[l.slot].claims {
		if r.c.at[r.u] < 0 {
			x += float64(float64(r.c.p.uses[r.u].Weight) * s.l[r.c.v.slot].load)
		}
	}
	return x
}

package atspi

// Names from labels: a field whose accessible name is empty is often named
// by a label that points at it (GTK entries labelled by a label). The walk
// reads the relation set of such nodes and takes the name of the first
// LABELLED_BY target. Some forms set no relation at all (zenity's, which
// also lists each field before its label): a field still nameless takes
// the text of the label beside it, a sibling on the same row to its left.

// relationLabelledBy is AT-SPI's ATSPI_RELATION_LABELLED_BY.
const relationLabelledBy = 2

// namedByLabel lists the roles whose empty name is looked up in their
// relations: the controls an agent fills in or toggles.
var namedByLabel = map[string]bool{
	"text": true, "entry": true, "password text": true, "combo box": true, "spin button": true,
	"slider": true, "check box": true, "radio button": true, "list": true, "list box": true,
	"table": true, "tree table": true, "calendar": true, "date editor": true, "toggle button": true,
	"push button": true,
}

// readLabelledBy reads the a(ua(so)) of Accessible.GetRelationSet and
// returns the first LABELLED_BY target in the application bus, "" if none.
func readLabelledBy(d *decoder, bus string) string {
	var target string
	end := d.array(8)
	for d.off < end && d.err == nil {
		d.align(8)
		kind := d.u32()
		inner := d.array(8)
		for d.off < inner && d.err == nil {
			b, p := d.ref()
			if kind == relationLabelledBy && target == "" && b == bus && p != pathNull {
				target = p
			}
		}
	}
	if d.err != nil {
		return ""
	}
	return target
}

// labelledBy names r after the label its relations point to, if any.
func (w *walk) labelledBy(r *rec) {
	w.p.call(call(w.dest, r.path, ifAccessible, "GetRelationSet"), func(m *message, err error) {
		if err != nil {
			return
		}
		d, err := expect(m, "a(ua(so))")
		if err != nil {
			return
		}
		label := readLabelledBy(d, w.bus)
		if d.err == nil {
			r.labelChecked = true
		}
		if label == "" || label == r.path {
			return
		}
		r.labelPath = label
		if l := w.recs[label]; l != nil && l.base {
			r.name = l.name
			return
		}
		w.p.call(getProperty(w.dest, label, ifAccessible, "Name"), func(m *message, err error) {
			if err != nil {
				return
			}
			if d, err := expect(m, "v"); err == nil && readVariant(d) == "s" {
				r.name = d.str()
			}
		})
	})
}

// nameBesideLabels names the fields still nameless after the relations
// after the nearest sibling label on their row, to their left.
func (w *walk) nameBesideLabels(order []*rec) {
	var byParent map[string][]*rec
	for _, r := range order {
		if r.name != "" || !namedByLabel[roleName(r.role)] || r.bbox.Empty() || r.parent == "" {
			continue
		}
		if byParent == nil {
			byParent = map[string][]*rec{}
			for _, o := range order {
				if roleName(o.role) == "label" && o.name != "" && !o.bbox.Empty() {
					byParent[o.parent] = append(byParent[o.parent], o)
				}
			}
		}
		mid := (r.bbox.Min.Y + r.bbox.Max.Y) / 2
		var best *rec
		for _, l := range byParent[r.parent] {
			if l.bbox.Min.Y <= mid && mid < l.bbox.Max.Y && l.bbox.Max.X <= r.bbox.Min.X+2 &&
				(best == nil || l.bbox.Max.X > best.bbox.Max.X) {
				best = l
			}
		}
		if best != nil {
			r.name = best.name
		}
	}
}

package mirrorpolicy

import "sort"

// mergeMirrors merges the mirror lists configured for one source into one
// order, exactly as openshift/runtime-utils pkg/registries mergedMirrors
// does on a node:
//
//   - every list adds edges between consecutive mirrors, and from its last
//     mirror to the source unless the source is itself in the list;
//   - the graph is sorted with Kahn's algorithm, always taking the
//     lexically smallest ready node, and a cycle (lists that disagree, such
//     as "a, b" and "b, a") is broken at the lexically smallest unused node;
//   - the source is dropped when it sorts last (the node tries it last
//     anyway); otherwise it stays where the lists put it.
//
// So lists "b, c" and "a, b" give "a, b, c", and unrelated lists "z" and
// "y" give "y, z": the result does not depend on the order of the inputs,
// which matters because nodes list ImageDigestMirrorSets in no set order.
func mergeMirrors(source string, lists [][]string) []string {
	index := map[string]int{}
	var names []string
	node := func(s string) int {
		i, ok := index[s]
		if !ok {
			i = len(names)
			index[s] = i
			names = append(names, s)
		}
		return i
	}
	type edge struct{ from, to int }
	seen := map[edge]bool{}
	var outs [][]int
	var ins []int
	addEdge := func(a, b string) {
		from, to := node(a), node(b)
		for len(outs) < len(names) {
			outs = append(outs, nil)
			ins = append(ins, 0)
		}
		e := edge{from, to}
		if seen[e] {
			return // redundant edges count once, as in runtime-utils' sets
		}
		seen[e] = true
		outs[from] = append(outs[from], to)
		ins[to]++
	}
	for _, mirrors := range lists {
		hasSource := false
		for i, m := range mirrors {
			if i+1 < len(mirrors) {
				addEdge(m, mirrors[i+1])
			}
			if m == source {
				hasSource = true
			}
		}
		if !hasSource && len(mirrors) > 0 {
			addEdge(mirrors[len(mirrors)-1], source)
		}
	}

	sorted := make([]int, len(names))
	for i := range sorted {
		sorted[i] = i
	}
	byName := func(s []int) { sort.Slice(s, func(i, j int) bool { return names[s[i]] < names[s[j]] }) }
	byName(sorted)

	var queue []int
	for _, n := range sorted {
		if ins[n] == 0 {
			queue = append(queue, n)
		}
	}
	used := make([]bool, len(names))
	res := make([]string, 0, len(names))
	next := 0 // position in sorted for breaking cycles
	for len(queue) > 0 || next < len(sorted) {
		var n int
		if len(queue) > 0 {
			n, queue = queue[0], queue[1:]
		} else {
			n = sorted[next]
			next++
			if used[n] {
				continue
			}
		}
		used[n] = true
		res = append(res, names[n])
		var batch []int
		for _, out := range outs[n] {
			ins[out]--
			if ins[out] == 0 && !used[out] {
				batch = append(batch, out)
			}
		}
		byName(batch)
		queue = append(queue, batch...)
	}
	if len(res) > 0 && res[len(res)-1] == source {
		res = res[:len(res)-1]
	}
	return res
}

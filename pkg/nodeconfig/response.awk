# Reads a kubelet CredentialProviderResponse (JSON) and prints, for the
# registry host given with -v host, three lines: the cacheDuration in whole
# seconds (-1 when absent or null), the username and the password. Username
# and password are printed exactly as written between their quotes, still
# JSON-escaped, so the caller can copy them into another JSON string as they
# are. Anything else (a syntax error, trailing data, a kind or apiVersion
# other than CredentialProviderResponse and -v want, no auth entry for host,
# an empty username or password, an unreadable cacheDuration) prints nothing
# and exits 1. Portable awk (gawk on RHCOS, mawk, busybox); run under
# LC_ALL=C so that substr and tolower work on bytes.
BEGIN {
	for (i = 1; i < 32; i++) ctl = ctl sprintf("%c", i)
	# NUL cannot go into ctl (index would find "" everywhere); awks that
	# can hold it in a string compare it alone, the others never see it.
	nul = sprintf("%c", 0)
	unit["ns"] = 1e-9; unit["us"] = 1e-6; unit["ms"] = 1e-3
	unit["s"] = 1; unit["m"] = 60; unit["h"] = 3600
	host = tolower(host)
}
{ doc = doc $0 "\n" }
END {
	n = length(doc)
	pos = 1
	skipws()
	if (substr(doc, pos, 1) != "{") exit 1
	object(1, "top")
	skipws()
	if (pos <= n) exit 1
	if (kind != "CredentialProviderResponse" || apiversion != want) exit 1
	if (rank == 0 || user == "" || pass == "") exit 1
	secs = -1
	if (hasdur) secs = seconds(dur)
	print secs
	print user
	print pass
}

function skipws(   c) {
	while (pos <= n) {
		c = substr(doc, pos, 1)
		if (c != " " && c != "\t" && c != "\n" && c != "\r") return
		pos++
	}
}

# jstring consumes the string at pos and returns its contents as written.
function jstring(   start, c) {
	if (substr(doc, pos, 1) != "\"") exit 1
	start = ++pos
	for (;;) {
		if (pos > n) exit 1
		c = substr(doc, pos, 1)
		if (c == "\"") {
			pos++
			return substr(doc, start, pos - 1 - start)
		}
		if (c == "\\") {
			c = substr(doc, pos + 1, 1)
			if (c == "u") {
				if (substr(doc, pos + 2, 4) !~ /^[0-9A-Fa-f][0-9A-Fa-f][0-9A-Fa-f][0-9A-Fa-f]$/) exit 1
				pos += 6
			} else if (c != "" && index("\"\\/bfnrt", c)) {
				pos += 2
			} else {
				exit 1
			}
			continue
		}
		if (index(ctl, c) || (nul != "" && c == nul)) exit 1
		pos++
	}
}

# value consumes any value at pos and returns its type: "string" (contents
# in sval), "object", "array", "number", "null" or "bool".
function value(depth,   c) {
	if (depth > 32) exit 1
	skipws()
	c = substr(doc, pos, 1)
	if (c == "\"") {
		sval = jstring()
		return "string"
	}
	if (c == "{") {
		object(depth + 1, "")
		return "object"
	}
	if (c == "[") {
		array(depth + 1)
		return "array"
	}
	if (substr(doc, pos, 4) == "null") {
		pos += 4
		return "null"
	}
	if (substr(doc, pos, 4) == "true") {
		pos += 4
		return "bool"
	}
	if (substr(doc, pos, 5) == "false") {
		pos += 5
		return "bool"
	}
	if (match(substr(doc, pos, 64), /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/)) {
		pos += RLENGTH
		return "number"
	}
	exit 1
}

function array(depth,   c) {
	if (depth > 32) exit 1
	pos++
	skipws()
	if (substr(doc, pos, 1) == "]") {
		pos++
		return
	}
	for (;;) {
		value(depth)
		skipws()
		c = substr(doc, pos, 1)
		pos++
		if (c == "]") return
		if (c != ",") exit 1
	}
}

# object consumes the object at pos. ctx says whose members matter: "top"
# (the response), "auth" (its auth map), "entry" (one AuthConfig), or "".
function object(depth, ctx,   c, key) {
	if (depth > 32) exit 1
	pos++
	skipws()
	if (substr(doc, pos, 1) == "}") {
		pos++
		return
	}
	for (;;) {
		skipws()
		key = jstring()
		skipws()
		if (substr(doc, pos, 1) != ":") exit 1
		pos++
		member(depth, ctx, key)
		skipws()
		c = substr(doc, pos, 1)
		pos++
		if (c == "}") return
		if (c != ",") exit 1
	}
}

# member consumes the value of key in an object of kind ctx. Types that Go
# encoding/json refuses for the kubelet structs are refused here too.
function member(depth, ctx, key,   t, r) {
	skipws()
	if (ctx == "top" && key == "auth") {
		if (substr(doc, pos, 1) == "{") {
			object(depth + 1, "auth")
			return
		}
		if (value(depth) != "null") exit 1
		# encoding/json sets the map to nil: forget earlier entries.
		rank = 0
		user = ""
		pass = ""
		return
	}
	if (ctx == "auth") {
		if (substr(doc, pos, 1) != "{") exit 1
		euser = ""
		epass = ""
		object(depth + 1, "entry")
		r = keymatch(key)
		# The exact host beats a glob; a repeated key replaces its
		# earlier value, as in encoding/json; otherwise the first wins.
		if (r > rank || (r > 0 && r == rank && key == rankkey)) {
			rank = r
			rankkey = key
			user = euser
			pass = epass
		}
		return
	}
	t = value(depth)
	if (ctx == "top") {
		if (key == "kind" || key == "apiVersion") {
			if (t != "string") exit 1
			if (key == "kind") kind = sval
			else apiversion = sval
		} else if (key == "cacheDuration") {
			if (t == "string") {
				hasdur = 1
				dur = sval
			} else if (t == "null") {
				hasdur = 0
			} else {
				exit 1
			}
		}
	} else if (ctx == "entry" && (key == "username" || key == "password")) {
		if (t == "null") sval = ""
		else if (t != "string") exit 1
		if (key == "username") euser = sval
		else epass = sval
	}
}

# keymatch ranks an auth key against host: 2 for the host itself, 1 for a
# kubelet-style glob whose "*" labels each match one label, 0 otherwise.
# Keys with a scheme, port, path or escape never match.
function keymatch(k,   kl, hl, nk, i) {
	k = tolower(k)
	if (k == host) return 2
	nk = split(k, kl, ".")
	if (nk != split(host, hl, ".")) return 0
	for (i = 1; i <= nk; i++) {
		if (kl[i] != "*" && kl[i] != hl[i]) return 0
	}
	return 1
}

# seconds converts a Go duration ("6h0m0s", "1.5s", "300ms") to whole
# seconds; a negative duration is 0 (do not cache).
function seconds(d,   sign, total, num, u) {
	if (d == "0") return 0
	sign = substr(d, 1, 1)
	if (sign == "-" || sign == "+") d = substr(d, 2)
	if (d == "") exit 1
	total = 0
	while (d != "") {
		if (!match(d, /^([0-9]+(\.[0-9]*)?|\.[0-9]+)/)) exit 1
		num = substr(d, 1, RLENGTH) + 0
		d = substr(d, RLENGTH + 1)
		if (substr(d, 1, 2) == "ns" || substr(d, 1, 2) == "us" || substr(d, 1, 2) == "ms") {
			u = substr(d, 1, 2)
			d = substr(d, 3)
		} else if (substr(d, 1, 3) == "\302\265s" || substr(d, 1, 3) == "\316\274s") {
			u = "us"
			d = substr(d, 4)
		} else if (substr(d, 1, 1) == "h" || substr(d, 1, 1) == "m" || substr(d, 1, 1) == "s") {
			u = substr(d, 1, 1)
			d = substr(d, 2)
		} else {
			exit 1
		}
		total += num * unit[u]
		# Go refuses durations over 2^63 ns; refuse them too.
		if (total > 9.2e9) exit 1
	}
	if (total > 1e9) total = 1e9
	if (sign == "-") return 0
	return int(total)
}

"""Command scripts whose answers must be byte-identical from memcached 1.6 and from shmemcached.

A case is (name, basic, steps). Every case runs against the reference backend and against a real shmemcached
job (differential_test.py). `basic` only says which cases need no more than set with flags 0 and no expiry, get,
delete, and what the gateway answers without the backend (errors, framing, limits); the others use issue 15's
contract (flags, expiry, tokens, modes, counters, touch, flush_all).

Steps:
  b"..."                 send, then sync (mn) and compare everything answered
  ("nosync", b"...")     send only; the answer is compared at the next sync
  ("sleep", seconds)
  ("conn", i)            the following steps use connection i (opened on first use)
  ("close", b"...", s)   send; the server must close the connection within s seconds; compare what came first
  ("shape", b"...")      the answer must be STAT lines and END (values differ between servers)
Placeholders in sent bytes: {k} a key prefix unique to the case, {cas} the last CAS token answered in this
case, {badcas} a token that cannot match, {now+N} the Unix time N seconds from now.
"""

BIG = 2000000  # larger than both servers' largest value (1 MiB)


def _keys(prefix, n):
    return [b"%s%d" % (prefix, i) for i in range(n)]


def _multi_set(prefix, n):
    return b"".join(b"set %s 0 0 %d noreply\r\n%s\r\n" % (k, len(k), k) for k in _keys(prefix, n))


CASES = [
    # ---- storage and retrieval ------------------------------------------------------------------------
    ("set_get", True, [
        b"set {k}a 0 0 5\r\nhello\r\n",
        b"get {k}a\r\n",
        b"get {k}missing\r\n",
        b"get {k}a {k}missing {k}a\r\n",
        b"set {k}a 0 0 3\r\nbye\r\nget {k}a\r\n",
    ]),
    ("empty_and_binary_values", True, [
        b"set {k}e 0 0 0\r\n\r\nget {k}e\r\n",
        b"set {k}b 0 0 8\r\na\r\n\x00b\xff\r\n\r\nget {k}b\r\n",
        b"set {k}c 0 0 2\r\n\r\n\r\nget {k}c\r\n",
    ]),
    ("noreply_store", True, [
        b"set {k}a 0 0 1 noreply\r\nx\r\nget {k}a\r\n",
        b"set {k}a 0 0 1 noreply\r\nabc\r\n",  # bad data chunk is not answered; the rest is a command
    ]),
    ("multiget_100_keys", True, [
        _multi_set(b"{k}m", 100),
        b"get " + b" ".join(_keys(b"{k}m", 100)) + b"\r\n",
        b"get " + b" ".join(_keys(b"{k}m", 30)) + b" " + b" ".join(_keys(b"{k}none", 30)) + b"\r\n",
    ]),
    ("long_get_line_arrives_in_pieces", True, [
        _multi_set(b"{k}p", 10),
        ("nosync", b"get " + b" ".join(_keys(b"{k}p", 10)) + b" " + b" ".join(_keys(b"{k}filler_long_key_", 200))),
        ("sleep", 0.3),
        b"\r\n",
    ]),
    ("pipelined_batch", True, [
        b"".join(b"set {k}q%d 0 0 1\r\n%d\r\n" % (i, i % 10) for i in range(50)) +
        b"".join(b"get {k}q%d\r\n" % i for i in range(50)) + b"delete {k}q3\r\nget {k}q3\r\n",
    ]),
    ("delete_forms", True, [
        b"set {k}a 0 0 1\r\nx\r\ndelete {k}a\r\ndelete {k}a\r\n",
        b"set {k}a 0 0 1\r\nx\r\ndelete {k}a noreply\r\nget {k}a\r\n",
        b"set {k}a 0 0 1\r\nx\r\ndelete {k}a 0\r\n",
        b"delete {k}a 1\r\n",
        b"set {k}a 0 0 1\r\nx\r\ndelete {k}a 0 noreply\r\nget {k}a\r\n",
        b"delete {k}a x noreply\r\n",
        b"delete\r\ndelete a b c d\r\n",
    ]),
    # ---- errors -----------------------------------------------------------------------------------------
    ("unknown_and_short_commands", True, [
        b"bogus\r\n", b"\r\n", b"x\r\n", b"get\r\n", b"gets\r\n", b"gx a\r\n", b"sets a\r\n", b"mz a\r\n",
        b"   \r\n", b"get\t{k}a\r\n", b"incr\r\n", b"touch a\r\n", b"cas a 0 0 1\r\n",
        b"shutdown\r\n", b"\r\r\n",
    ]),
    ("set_argument_errors", True, [
        b"set\r\n", b"set k 0 0\r\n", b"set k 0 0 1 2 3\r\n",
        b"set k abc 0 1\r\nx\r\n", b"set k 0 abc 1\r\nx\r\n", b"set k 0 0 abc\r\nx\r\n",
        b"set k 0 0 -1\r\nx\r\n", b"set k -1 0 1\r\nx\r\n", b"set k 0 0 2147483646\r\n",
        b"set k abc 0 1 noreply\r\nx\r\n",
        b"set {k}t 0 0 4294967297\r\nx\r\nget {k}t\r\n",  # memcached keeps the low 32 bits of the length
        b"set {k}u 0 0 1\t\r\ny\r\nget {k}u\r\n",         # whitespace after a number is accepted
        b"set {k}v 0 0 01\r\nz\r\nget {k}v\r\n",
    ]),
    ("bad_data_chunk", True, [
        b"set {k}a 0 0 1\r\nabc\r\n",
        b"set {k}a 0 0 3\r\nabcde\r\n",
        b"set {k}a 0 0 3\r\nab\n\r\n",
        b"get {k}a\r\n",
    ]),
    ("key_length", True, [
        b"set {k}" + b"x" * 240 + b" 0 0 1\r\n1\r\nget {k}" + b"x" * 240 + b"\r\n",  # 250 bytes: fine
        b"set " + b"y" * 251 + b" 0 0 1\r\n1\r\n",
        b"get " + b"y" * 251 + b"\r\n",
        b"set {k}ok 0 0 1\r\n1\r\n",
        b"get {k}ok " + b"y" * 251 + b"\r\n",
        b"delete " + b"y" * 251 + b"\r\n",
    ]),
    ("control_bytes_in_keys", True, [
        b"set {k}\x01\x02 0 0 1\r\na\r\nget {k}\x01\x02\r\n",
        b"set {k}\x7f\xff\xfe 0 0 1\r\nb\r\nget {k}\x7f\xff\xfe\r\n",
        b"set {k}t\tab 0 0 1\r\nc\r\nget {k}t\tab\r\n",
        b"set {k}cr\rx 0 0 1\r\nd\r\nget {k}cr\rx\r\n",
        b"set {k}n\x00x 0 0 1\r\ne\r\n",  # a NUL ends the command line: "set {k}n" is an ERROR
        b"get {k}\x01\x02\x00ignored\r\n",
    ]),
    ("value_too_large_is_swallowed", True, [
        b"set {k}big 0 0 3\r\nold\r\n",
        b"set {k}big 0 0 %d\r\n" % BIG + (b"z\r\nget x\r\n" * (BIG // 9 + 1))[:BIG] + b"\r\n",
        b"get {k}big\r\n",
        b"set {k}big2 0 0 %d noreply\r\n" % BIG + b"q" * BIG + b"\r\nget {k}big2\r\n",
        b"add {k}big3 0 0 %d\r\n" % BIG + b"q" * BIG + b"\r\n",
    ]),
    ("line_without_newline_closes", True, [
        b"set {k}a 0 0 1\r\nx\r\n",
        ("close", b"x" * 3000, 5),
    ]),
    ("http_request_closes", True, [
        ("close", b"GET / HTTP/1.1\r\n", 5),
    ]),
    ("quit_after_answering", True, [
        b"set {k}a 0 0 1\r\nx\r\n",
        ("close", b"get {k}a\r\nquit\r\nget {k}a\r\n", 5),
    ]),
    ("noise_and_spacing", True, [
        b"   get {k}a\r\n", b"get {k}a\n", b"get {k}a\r\r\n", b"bget {k}a\r\n",
        b"set {k}sp  0  0  1 \r\nz\r\nget   {k}sp   \r\n",
    ]),
    ("version_verbosity_stats", True, [
        b"version\r\n", b"verbosity 1\r\n", b"verbosity\r\n", b"verbosity x\r\n", b"verbosity 1 noreply\r\n",
        b"verbosity 1 2 3\r\n",
        ("shape", b"stats\r\n"), ("shape", b"stats settings\r\n"), b"stats reset\r\n", b"stats bogus\r\n",
    ]),
    # ---- issue 15's contract (reference backend until it is merged) ----------------------------------
    ("flags", False, [
        b"set {k}f 5 0 1\r\na\r\nget {k}f\r\n",
        b"set {k}f 4294967295 0 1\r\na\r\nget {k}f\r\n",
        b"set {k}f 4294967296 0 1\r\na\r\nget {k}f\r\n",
    ]),
    ("add_replace_append_prepend", False, [
        b"add {k}a 1 0 1\r\nx\r\nadd {k}a 2 0 1\r\ny\r\nget {k}a\r\n",
        b"replace {k}b 0 0 1\r\nx\r\nreplace {k}a 3 0 1\r\nz\r\nget {k}a\r\n",
        b"append {k}c 0 0 1\r\nx\r\nprepend {k}c 0 0 1\r\nx\r\n",
        b"append {k}a 9 0 2\r\n>>\r\nprepend {k}a 9 0 2\r\n<<\r\nget {k}a\r\n",
        b"add {k}a 0 0 1 noreply\r\nq\r\nget {k}a\r\n",
    ]),
    ("cas", False, [
        b"set {k}a 0 0 1\r\nx\r\ngets {k}a\r\n",
        b"cas {k}a 0 0 1 {cas}\r\ny\r\ngets {k}a\r\n",
        b"cas {k}a 0 0 1 {badcas}\r\nz\r\ngets {k}a\r\n",
        b"cas {k}nope 0 0 1 1\r\nz\r\n",
        b"cas {k}a 0 0 1 0\r\nz\r\ncas {k}nope 0 0 1 0\r\nz\r\n",
        b"cas {k}a 0 0 1 abc\r\nz\r\n",
        b"cas {k}a 0 0 1 {cas} noreply\r\nw\r\ngets {k}a\r\n",
        b"gets {k}a {k}nope {k}a\r\n",
    ]),
    # The gateway's wire token for "no modification yet" would be KeyMask(key) (wire_token.h): sent by a client
    # it must match nothing (memcached: EXISTS on a present key, NOT_FOUND on an absent one), never mean "no token".
    ("cas_with_the_key_mask", False, [
        b"set {k}a 0 0 1\r\nx\r\n",
        b"cas {k}a 0 0 1 {mask:a}\r\ny\r\ncas {k}nope 0 0 1 {mask:nope}\r\ny\r\nget {k}a {k}nope\r\n",
        b"ms {k}a 1 C{mask:a}\r\nz\r\nms {k}nope 1 C{mask:nope}\r\nz\r\nmg {k}a v\r\nmg {k}nope v\r\n",
    ]),
    ("cas_race_between_two_connections", False, [
        b"set {k}r 0 0 1\r\n0\r\ngets {k}r\r\n",
        ("conn", 1), b"gets {k}r\r\n",
        ("conn", 0), b"cas {k}r 0 0 1 {cas}\r\nA\r\n",
        ("conn", 1), b"cas {k}r 0 0 1 {cas}\r\nB\r\n",
        b"gets {k}r\r\n",
    ]),
    ("incr_decr", False, [
        b"set {k}n 0 0 2\r\n10\r\nincr {k}n 5\r\ndecr {k}n 6\r\nget {k}n\r\n",
        b"decr {k}n 100\r\nget {k}n\r\n",
        b"set {k}w 0 0 20\r\n18446744073709551615\r\nincr {k}w 2\r\n",
        b"incr {k}w 18446744073709551615\r\n",
        b"incr {k}missing 1\r\ndecr {k}missing 1\r\n",
        b"set {k}s 0 0 3\r\nabc\r\nincr {k}s 1\r\n",
        b"set {k}z 0 0 0\r\n\r\nincr {k}z 1\r\n",
        b"set {k}sp 0 0 2\r\n 5\r\nincr {k}sp 1\r\nget {k}sp\r\n",
        b"set {k}neg 0 0 2\r\n-5\r\nincr {k}neg 1\r\n",
        b"incr {k}n abc\r\nincr {k}n -1\r\nincr {k}n\r\n",
        b"incr {k}n 1 noreply\r\nget {k}n\r\n",
        b"set {k}big 0 0 4\r\n9999\r\nincr {k}big 1\r\nget {k}big\r\n",
    ]),
    ("touch_and_gat", False, [
        b"set {k}a 0 0 1\r\nx\r\ntouch {k}a 100\r\ntouch {k}missing 100\r\n",
        b"touch {k}a abc\r\ntouch {k}a 10 noreply\r\n",
        b"gat 100 {k}a {k}missing\r\ngats 100 {k}a\r\n",
        b"gat abc {k}a\r\ngat 100\r\n",
        b"gat -1 {k}a\r\nget {k}a\r\n",  # touched into the past: returned once, then gone
    ]),
    ("expiry", False, [
        b"set {k}a 0 2 1\r\nx\r\nset {k}past 0 -1 1\r\ny\r\nset {k}abs 0 {now+100} 1\r\nz\r\n",
        b"set {k}old 0 1000000000 1\r\nw\r\n",
        b"get {k}a {k}past {k}abs {k}old\r\n",
        ("sleep", 3.5),
        b"get {k}a {k}abs\r\n",
        b"add {k}a 0 0 1\r\nn\r\nget {k}a\r\n",
    ]),
    ("meta_get", False, [
        b"set {k}a 7 0 2\r\nhi\r\n",
        b"mg {k}a\r\nmg {k}a v\r\nmg {k}a s f v k O123 c\r\nmg {k}missing v k Oabc\r\n",
        b"mg {k}missing q v\r\nmg {k}a q v\r\nmn\r\n",
        b"mg {k}a v v\r\nmg {k}a x\r\nmg {k}a Tabc\r\nmg {k}a O" + b"o" * 40 + b"\r\n",
        b"mg {k}missing O" + b"o" * 40 + b"\r\n",
        b"mg " + b"y" * 251 + b" v\r\nmg\r\n",
        b"mg {k}a " + b" ".join(b"O%d" % i for i in range(19)) + b"\r\n",
        b"mg {k}a T100 v\r\nmg {k}a u v\r\n",
        b"mg {k}a \x80\r\n",
        # A T after an opaque too long touches nothing (memcached stops at it); one before it does.
        b"mg {k}a k O" + b"o" * 40 + b" T-1\r\nmg {k}a v\r\nmg {k}a T-1 O" + b"o" * 40 + b"\r\nmg {k}a v\r\n",
    ]),
    ("meta_set_and_base64_keys", False, [
        b"ms {k}a 2\r\nhi\r\nmg {k}a v f\r\n",
        b"ms {k}a 2 F9 T100 c k O55\r\nyo\r\nmg {k}a v f\r\n",
        b"ms {k}b 1 ME\r\n1\r\nms {k}b 1 ME\r\n2\r\nms {k}c 1 MR\r\n1\r\nms {k}b 1 MA\r\n3\r\n"
        b"ms {k}b 1 MP\r\n0\r\nms {k}b 1 MS q\r\n9\r\nmg {k}b v\r\n",
        b"ms {k}b 1 MX\r\n1\r\nms {k}b 1 MEE\r\n1\r\nms {k}b 1 F\r\n1\r\nms {k}b 1 Tx\r\n1\r\n",
        b"ms {k}b 1 q q\r\n1\r\nms {k}b 1 x\r\n1\r\nms {k}b x\r\n1\r\nms {k}b\r\nms {k}b -1\r\n",
        b"ms {k}b 1 O" + b"o" * 40 + b"\r\n1\r\n",
        b"ms {k}b 2\r\nabc\r\n",
        b"ms {k}big %d T0\r\n" % BIG + b"v" * BIG + b"\r\nmg {k}big v\r\n",
        b"ms Zm9v 3 b k\r\nbar\r\nmg Zm9v b v k\r\nget foo\r\nmd Zm9v b k\r\nmg Zm9v b v\r\n",
        b"ms !!! 1 b\r\nx\r\nmg YQ b\r\n",
    ]),
    ("meta_cas", False, [
        b"ms {k}a 1 c\r\n1\r\n",
        b"ms {k}a 1 C{cas} c\r\n2\r\n",
        b"ms {k}a 1 C{badcas}\r\n3\r\nms {k}nope 1 C1\r\n3\r\nms {k}nope 1 C1 MA\r\n3\r\n",
        b"ms {k}a 1 C{badcas} MA\r\n3\r\nms {k}a 1 C{badcas} ME\r\n3\r\nmg {k}a v c\r\n",
        b"ms {k}a 1 C0\r\n4\r\nms {k}a 1 C{cas} MA c\r\n5\r\nmg {k}a v\r\n",
    ]),
    ("meta_delete", False, [
        b"ms {k}a 1\r\n1\r\nmd {k}a\r\nmd {k}a\r\nmd {k}a q k O1\r\n",
        b"ms {k}a 1\r\n1\r\nmd {k}a q\r\nmg {k}a\r\nmd {k}a T10\r\n",
        b"md {k}a x\r\nmd {k}a q q\r\nmd\r\nmd " + b"y" * 251 + b"\r\n",
    ]),
    ("meta_arithmetic", False, [
        b"ma {k}n\r\nma {k}n N0 J5 v\r\nma {k}n v\r\nma {k}n q\r\nma {k}n v k O9\r\n",
        b"ma {k}n MD D100 v\r\nma {k}n M- v\r\nma {k}n M+ D3 v\r\nma {k}n MI v\r\nma {k}n MZ\r\n",
        b"ma {k}n Dx\r\nma {k}n Jx\r\nma {k}n q q\r\n",
        b"ms {k}s 3\r\nabc\r\nma {k}s\r\n",
        b"ma {k}fresh N100 q v\r\nma {k}fresh q v\r\nma {k}none q\r\nmn\r\n",
        b"ma {k}n T100 v\r\nmg {k}n v\r\n",
        # T and N after an opaque too long are not applied (memcached stops at it): created without expiry,
        # then not touched into the past.
        b"ma {k}o O" + b"o" * 40 + b" N-1\r\nmg {k}o v\r\nma {k}o O" + b"o" * 40 + b" T-1\r\nmg {k}o v\r\n",
        b"ma {k}p N-1 O" + b"o" * 40 + b"\r\nmg {k}p v\r\n",
    ]),
    ("meta_noop_and_pipelines", False, [
        b"mn\r\n",
        b"ms {k}a 1 q\r\n1\r\nms {k}b 1 q\r\n2\r\nmg {k}a q v k\r\nmg {k}x q v k\r\nmg {k}b q v k\r\nmn\r\n",
    ]),
    # An absolute time before memcached's start makes memcached's flush time 0, "no flush": nothing goes (and
    # a pending delayed flush is cancelled). Before any other flush_all (a later one could not bring back what
    # an earlier one hid, as memcached's lazy flush does).
    ("flush_all_absolute_before_start", False, [
        b"set {k}d 0 0 1\r\nq\r\nflush_all 1000000000\r\nget {k}d\r\n",
        b"flush_all 1000000000 noreply\r\nget {k}d\r\n",
    ]),
    # flush_all last: it empties the whole cache.
    ("flush_all", False, [
        b"set {k}a 0 0 1\r\nx\r\nflush_all\r\nget {k}a\r\n",
        b"flush_all abc\r\nflush_all 0\r\nflush_all noreply\r\nflush_all 0 noreply\r\nflush_all 1 2 3\r\n",
        b"set {k}b 0 0 1\r\ny\r\nflush_all 2\r\nget {k}b\r\n",
        ("sleep", 3.2),
        b"get {k}b\r\n",
        b"set {k}c 0 0 1\r\nz\r\nget {k}c\r\n",
    ]),
]

/*
 * shmemcache — a distributed in-memory key-value cache inside an OpenSHMEM job.
 *
 * Some PEs of an `oshrun` job are servers (PEs 0 .. num_servers-1); the others are clients. Servers keep the
 * hash table, the KV blocks and the message chunks in symmetric memory. Clients read and update hot pairs with
 * one-sided get/put/CAS (Direct operations) and ask a server through the messaging conduit (Active operations)
 * for inserts, cold pairs and misses. Every call below is made by one PE for itself; `shmemcache_init` and
 * `shmemcache_finalize` are collective over all PEs of the job.
 *
 * Threads: a handle may be shared by the threads of its PE. Every call on it (data calls, blocking and
 * non-blocking, test/wait, get_stats, serve, finalize) may be made from any thread at any time. Calls of
 * different threads run side by side: each thread has its own SHMEM context (where the transport allows one;
 * over UCX tcp the threads share one behind a lock), pointer directory and request pool, so Direct operations
 * of different threads share no lock; Active operations (requests to a server, and taking in the replies) pass
 * one lock per client PE one at a time. shmemcache_finalize and shmemcache_serve run alone: they wait until the
 * calls inside have returned, and calls made meanwhile wait for them. Operations of one thread on one key take
 * effect in that thread's issue order; operations of different threads are concurrent, each one atomic. This
 * needs OpenSHMEM at SHMEM_THREAD_MULTIPLE: shmemcache_init
 * asks for it when it starts OpenSHMEM (shmem_init_thread); an application that starts OpenSHMEM itself must ask
 * for it too. Below MULTIPLE (plain shmem_init), only the thread that called shmemcache_init may use the handle:
 * a call from any other thread returns SHMEMCACHE_WRONG_THREAD and does nothing. What stays the caller's rule:
 * shmemcache_destroy is not called while another thread uses the handle, and a request (non-blocking
 * calls) is tested and waited for by any thread but released by exactly one shmemcache_wait.
 * Keys and values are arbitrary bytes (NUL included). Errors are returned as shmemcache_status_t values; nothing
 * here aborts the process on bad input.
 */
#ifndef SHMEMCACHE_SHMEMCACHE_H_
#define SHMEMCACHE_SHMEMCACHE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SHMEMCACHE_VERSION_MAJOR 0
#define SHMEMCACHE_VERSION_MINOR 2
#define SHMEMCACHE_VERSION_PATCH 0

/* Opaque per-PE handle. */
typedef struct shmemcache shmemcache_t;

typedef enum {
  SHMEMCACHE_OK = 0,
  SHMEMCACHE_NOT_FOUND,          /* no pair for that key */
  SHMEMCACHE_INVALID_ARGUMENT,   /* NULL/empty key, NULL handle or output pointer, ... */
  SHMEMCACHE_KEY_TOO_LONG,       /* key_len > config.max_key_len */
  SHMEMCACHE_VALUE_TOO_LARGE,    /* value_len > config.max_value_len, or the pair cannot fit any block */
  SHMEMCACHE_BUFFER_TOO_SMALL,   /* get: *value_len holds the size needed */
  SHMEMCACHE_NO_SPACE,           /* the server has no memory left for this pair */
  SHMEMCACHE_WRONG_ROLE,         /* a data call on a server PE, or shmemcache_serve on a client PE */
  SHMEMCACHE_IN_PROGRESS,        /* a non-blocking request has not completed yet */
  SHMEMCACHE_IO_ERROR,           /* the SSD tier failed */
  SHMEMCACHE_CONFIG_ERROR,       /* the configuration is unusable; shmemcache_last_error() says why */
  SHMEMCACHE_SHUT_DOWN,          /* the handle was finalized */
  SHMEMCACHE_EXISTS,             /* add: the key is present; store with a CAS token: the pair changed since the
                                    token */
  SHMEMCACHE_NOT_STORED,         /* replace / append / prepend: the key is absent */
  SHMEMCACHE_NOT_NUMERIC,        /* incr: the stored value is not an unsigned decimal number of at most 20
                                    digits */
  SHMEMCACHE_TIMEOUT,            /* a peer did not answer within config.op_timeout_ms; shmemcache_last_error()
                                    names the PE, the ring and what was seen. Later calls that need that server
                                    return TIMEOUT at once (see "Failures" below) */
  SHMEMCACHE_WRONG_THREAD,       /* a call from a thread other than the one that called shmemcache_init while
                                    OpenSHMEM runs below SHMEM_THREAD_MULTIPLE (see "Threads" below) */
  SHMEMCACHE_NOT_SUPPORTED       /* shmemcache_arm: a server of the calling thread's requests in flight (its
                                    own, or those it tested) cannot wake this client (another node, UCX tcp,
                                    local_access 0 on either PE, pidfd_getfd refused, another pid namespace) */
} shmemcache_status_t;

/* Static, human-readable text for a status; never NULL (unknown values give "unknown status"). */
const char *shmemcache_strerror(shmemcache_status_t status);

/* The detail of the last CONFIG_ERROR (or other failure with more to say) on this thread, e.g. which
 * environment variable to raise and by how much. Empty string when there is nothing to say; never NULL. */
const char *shmemcache_last_error(void);

/*
 * Failures. No call waits forever on another PE: every wait for a peer (a reply, room in a message ring, a
 * message that was flagged but never completed, a block lock a client holds) gives up after
 * config.op_timeout_ms and the operation returns SHMEMCACHE_TIMEOUT with the PE, ring and what was seen in
 * shmemcache_last_error(). A client then treats that server as failed: every later call that needs it (blocking
 * or non-blocking, Direct or Active) returns TIMEOUT at once and the client reads nothing more from it, so a late
 * reply is never taken for the answer to a newer request. A server that cannot trust its message rings
 * any more prints one line on stderr and leaves shmemcache_serve with SHMEMCACHE_TIMEOUT. shmemcache_finalize
 * never waits on a failed server in the library's own loops.
 * An idle server waiting for work is not a failure: shmemcache_serve waits for clients as long as they live.
 * If the library runs out of this process's memory (std::bad_alloc inside), shmemcache_init returns
 * SHMEMCACHE_CONFIG_ERROR and data calls return SHMEMCACHE_NO_SPACE, with the reason in
 * shmemcache_last_error(); no C++ exception ever leaves the C API.
 */

/*
 * Configuration. Every field has a default and one environment variable, SHMEMCACHE_<FIELD IN CAPITALS>
 * (e.g. SHMEMCACHE_SERVER_MEMORY_BYTES=256M), applied by shmemcache_config_defaults. Sizes accept K/M/G
 * suffixes (powers of 1024). Every PE must pass the same configuration; init checks this.
 */
typedef struct {
  int num_servers;              /* PEs 0..num_servers-1 serve; default 1 */
  size_t server_memory_bytes;   /* KV block memory per server; default 64 MiB */
  size_t hash_sets;             /* sets in each server's hash table; default 0 = sized from server_memory_bytes:
                                   one way per 64 bytes (a full server holds 0.6 typical pairs per way,
                                   0.8 of the smallest; with two candidate sets per key none of them is left
                                   where Direct operations cannot reach);
                                   the table then takes a quarter of server_memory_bytes more symmetric heap */
  unsigned hash_ways;           /* ways (sub-entries) per set; default 8 */
  size_t directory_entries;     /* client pointer-directory sets; default 8192 (x 8 ways: 65536 pointers, 3.5 MiB);
                                   each client thread that calls the library has its own directory of this size */
  unsigned directory_ways;      /* sub-entries per directory set; default 8 */
  unsigned recency_range_ms;    /* length of one recency time range; default 100 */
  size_t max_key_len;           /* default 250 */
  size_t max_value_len;         /* default 1 MiB */
  size_t chunk_bytes;           /* size of one message chunk; default 4352 (a 4 KiB value and its headers) */
  unsigned chunks_per_peer;     /* chunks in each ring (one per peer on every PE: chunks_per_peer x chunk_bytes
                                   symmetric bytes per client on each server); default 0 = auto: max_outstanding,
                                   at least 8, at most 32, fewer (not below 8) where a PE's rings would pass
                                   16 MiB */
  int direct_ops;               /* 1 = Direct operations allowed, 0 = Active only; default 1 */
  const char *spill_dir;        /* SSD tier directory; NULL = no SSD tier */
  size_t spill_bytes;           /* SSD tier capacity per server; default 1 GiB */
  size_t spill_mmap_max_bytes;  /* SSD tier records up to this size are read through mmap (inline when mincore
                                   says they are cached), larger ones with pread (inline when the page cache
                                   holds them); default 0 = pread for all, measured faster on Linux 6.x / ext4
                                   (bench/README.md, part `hybrid`) */
  double slab_growth_factor;    /* ratio between consecutive slab classes; default 1.25 */
  size_t slab_page_bytes;       /* memory is handed to slab classes in pages of this size; default 1 MiB
                                   (at most server_memory_bytes / 256, at least 4 KiB; a block larger than a
                                   page takes a slab of several contiguous pages) */
  int private_context;          /* 1 = the library's own SHMEM context (its quiet never waits on the
                                   application's traffic); 0 = share SHMEM_CTX_DEFAULT; -1 = auto (default):
                                   own context unless UCX would carry some of its traffic over tcp on some PE
                                   (asked at init), where OpenMPI 4.1 hangs with a private context (README,
                                   "Running on a cluster") */
  unsigned max_outstanding;     /* non-blocking requests a client PE (all its threads together) may have in
                                   flight before issuing waits for the oldest; default 64 (threads issuing at
                                   the same moment may pass it by up to one request each) */
  unsigned op_timeout_ms;       /* how long any wait for another PE may last before the operation fails with
                                   SHMEMCACHE_TIMEOUT (see "Failures"); >= 1; default 60000, long enough for
                                   a loaded, oversubscribed node */
  size_t large_value_threshold; /* values of at least this many bytes bypass the message ring: an Active GET
                                   answers with the block's location and the client pulls the value with one
                                   get (validated like a Direct GET); a blocking Active SET or store
                                   (mode set, no cas) to a server this PE maps (same node, local_access
                                   on) has the server reserve a block, writes the value into it itself and
                                   has the server publish it (the server never copies the value); any other
                                   Active SET puts the value into a landing slot on the server first
                                   (max_value_len bytes per client in every PE's symmetric memory). An Active GET from a server this PE maps (same
                                   node, local_access on, no spill_dir) pulls from 1 KiB on already, or from
                                   this value if it is lower (there a pull is a local copy), also when this
                                   value is above max_value_len (no landing slots then). 0 = never; default
                                   8 KiB (bench/README.md) */
  int direct_policy;            /* which path Direct-capable operations take when direct_ops is 1:
                                   SHMEMCACHE_DIRECT_AUTO (default: SETs and incrs go Active, GETs Direct, where
                                   every one-sided operation needs the target's CPU, i.e. UCX tcp; Direct elsewhere),
                                   SHMEMCACHE_DIRECT_ALWAYS, SHMEMCACHE_DIRECT_NEVER; the environment variable
                                   takes auto / always / never. shmemcache_stats_t says what was decided.
                                   This PE's own choice: PEs may set it differently (every path follows the
                                   same block protocol, so Direct and Active clients mix) */
  int local_access;             /* Direct operations on a server this PE can map (shmem_ptr: same node) use
                                   plain loads and stores through the mapping, under the same lock/version
                                   protocol: 1 = on (init fails where a server cannot be mapped), 0 = off
                                   (one-sided get/put only), -1 = auto (default): on for every server that
                                   maps. Where every PE maps every server and UCX runs its atomics on the CPU
                                   (agreed at init), a PE with local_access != 0 also takes block locks and
                                   publishes versions with CPU atomics (stats cpu_word_atomics), a server on
                                   its own blocks too. This PE's own choice: PEs may set it differently */
  int mget_policy;              /* how shmemcache_mget / shmemcache_imget ask for the keys Direct operations
                                   do not answer: SHMEMCACHE_MGET_AUTO (default: over UCX tcp every key goes
                                   in multi-get messages, one per server, no Direct read, since each
                                   one-sided get there needs the server's CPU as a message does; elsewhere
                                   Direct reads for keys with a cached pointer or found in the server's hash
                                   table, and one multi-get message per server for the rest),
                                   SHMEMCACHE_MGET_MESSAGE (every key in multi-get messages),
                                   SHMEMCACHE_MGET_SINGLE (one Active GET per key not answered Direct: the
                                   behaviour before multi-get messages); the environment variable takes
                                   auto / message / single. Stats mget_messages count the messages */
  int idle_spin_us;             /* how long an idle server spins, waiting for its next request, before it
                                   sleeps (on a futex, woken by clients on its node, in naps of at most
                                   10 ms; 200 us where some client cannot wake it), so an idle server costs no
                                   CPU: 1..1000000 microseconds; 0 = never sleeps (spins in the runtime's wait,
                                   as before); -1 = auto (default): SHMEMCACHE_IDLE_SPIN_AUTO_US where every
                                   client maps the server's memory (same node), never elsewhere (over UCX tcp
                                   a sleeping server would also delay Direct operations, which need its CPU
                                   there); SHMEMCACHE_IDLE_SPIN_ADAPTIVE (-2): as auto, but cut to
                                   SHMEMCACHE_IDLE_SPIN_CONTENDED_US (a constant) while other threads want the
                                   server's core (its spin's yields hand the core away: a gateway and its TCP
                                   clients on the same cores, or client PEs on an oversubscribed node; opt-in
                                   until measured on real cores). Stats idle_sleeps / doorbell_wakes /
                                   idle_spins_contended count naps, wakes and cut spins */
  int oversubscribed;           /* whether this PE's node runs more PEs than it has CPUs for, which decides
                                   how the library waits for another PE (a reply, a lock): on a node that is
                                   not, a waiter spins up to 1 ms before it yields its core; on one that is,
                                   it yields from its first empty poll, since the PE it waits for may need
                                   that very core (measured: a client on its server's core got 1/30 of the
                                   other clients' operations while it spun). -1 = auto (default): yes when
                                   the PEs on this node (the launcher's count, OMPI_COMM_WORLD_LOCAL_SIZE, else
                                   the PEs this PE maps) outnumber the CPUs it may run on (its affinity mask;
                                   all CPUs online when that names one CPU, as with --bind-to core); 0 = no;
                                   1 = yes. This PE's own choice (PEs may differ) */
} shmemcache_config_t;

/* The spin of an idle server before it sleeps, idle_spin_us auto, on a node where its clients can wake it: 1 ms
 * rides out a client's lost time slice on a loaded node (with 100 us, back-to-back Active operations under load
 * fell more often into wake-ups onto a shared core: p50 1.8 us -> ms), and an idle server still sleeps within
 * 1 ms of its last request. */
#define SHMEMCACHE_IDLE_SPIN_AUTO_US 1000
/* idle_spin_us adaptive: auto's spin, cut to SHMEMCACHE_IDLE_SPIN_CONTENDED_US while other threads want the
 * server's core. A fixed 20 us spin gave a shmemcached node, whose gateways and TCP clients share the servers'
 * cores, 0.90x memcached's memcaslap throughput at 32 connections instead of 0.68x with 1 ms (16 cores, one
 * repeat; issue 17), and costs a wake-up per request where the core is free: hence only while it is contended.
 * On the 2-core VM the adaptive spin's throughput was within the noise of auto's (server CPU per operation lower
 * at load 3, higher at load 6), so it is not the default yet. */
#define SHMEMCACHE_IDLE_SPIN_ADAPTIVE (-2)
#define SHMEMCACHE_IDLE_SPIN_CONTENDED_US 20

/* Values of shmemcache_config_t.direct_policy. */
enum {
  SHMEMCACHE_DIRECT_AUTO = 0,
  SHMEMCACHE_DIRECT_ALWAYS = 1,
  SHMEMCACHE_DIRECT_NEVER = 2
};

/* Values of shmemcache_config_t.mget_policy. */
enum {
  SHMEMCACHE_MGET_AUTO = 0,
  SHMEMCACHE_MGET_MESSAGE = 1,
  SHMEMCACHE_MGET_SINGLE = 2
};

/* Fills *config with the defaults, then applies the SHMEMCACHE_* environment variables. A variable that does
 * not parse returns SHMEMCACHE_CONFIG_ERROR (shmemcache_last_error() names it) and leaves that field at its
 * default. config == NULL returns SHMEMCACHE_INVALID_ARGUMENT. Sizes that parse but are absurd (a table or a
 * memory size that overflows, a directory larger than the node) are rejected by shmemcache_init. */
shmemcache_status_t shmemcache_config_defaults(shmemcache_config_t *config);

/*
 * Collective over all PEs, every time, whatever the configuration (a PE whose configuration is bad still takes
 * part). config == NULL means defaults plus environment. Initialises OpenSHMEM if the application has not (and
 * then finalizes it in shmemcache_finalize; a failed init leaves it running, since OpenMPI cannot initialise
 * again after shmem_finalize: a later init uses it, and a program that exits instead need not do anything);
 * otherwise uses the application's runtime and never finalizes it. The library uses its own SHMEM context. On
 * success *cache holds a new handle.
 * Init fails together: if any PE rejects the configuration (a value out of range, a size that overflows, a
 * layout the symmetric heap cannot hold, an environment variable that does not parse, an unusable spill_dir) or
 * the PEs pass different configurations, every PE returns SHMEMCACHE_CONFIG_ERROR and no handle is created.
 * shmemcache_last_error() says why on the PE that rejected it, names the rejecting PE(s) on the others, and,
 * when configurations differ, names the first field that differs (e.g. a SHMEMCACHE_* variable that was not
 * forwarded to every PE). cache == NULL returns SHMEMCACHE_INVALID_ARGUMENT on that PE alone.
 */
shmemcache_status_t shmemcache_init(const shmemcache_config_t *config, shmemcache_t **cache);

/* 1 on server PEs, 0 on clients (and for NULL). */
int shmemcache_is_server(const shmemcache_t *cache);

/* This PE's rank among the clients (0 .. num_clients-1), or -1 on a server. */
int shmemcache_client_rank(const shmemcache_t *cache);
/* Number of client PEs in the job. */
int shmemcache_num_clients(const shmemcache_t *cache);

/* Server PEs only: serve Active operations until every client PE has called shmemcache_finalize, then
 * return SHMEMCACHE_OK. SHMEMCACHE_TIMEOUT when the server could not go on (a message that was flagged but did
 * not complete, or a client's block lock not released, within op_timeout_ms; one line on stderr and
 * shmemcache_last_error() say what was seen); its clients then get TIMEOUT. A second call returns the first
 * call's status. On a client PE returns SHMEMCACHE_WRONG_ROLE. */
shmemcache_status_t shmemcache_serve(shmemcache_t *cache);

/* Stores value under key, replacing any previous value. Returns OK, or INVALID_ARGUMENT, KEY_TOO_LONG,
 * VALUE_TOO_LARGE, NO_SPACE, WRONG_ROLE, SHUT_DOWN; on any error nothing is changed. value may be NULL only
 * when value_len == 0. TIMEOUT when the key's server did not answer (see "Failures"): the pair may or may not
 * have been stored. */
shmemcache_status_t shmemcache_set(shmemcache_t *cache, const void *key, size_t key_len, const void *value,
                                   size_t value_len);

/* Copies the value of key into buffer[0 .. *value_len). On NOT_FOUND *value_len is 0 and buffer unchanged.
 * If buffer_len is smaller than the value, returns BUFFER_TOO_SMALL with *value_len set to the size needed
 * and buffer unchanged. One exception to "unchanged": a Direct GET copies the value straight into buffer and
 * validates it afterwards, so a GET that raced a write, move or delete of the same key, or that found the pair
 * expired (its expiry is judged from the copy's header), may have left bytes in buffer[0 .. buffer_len)
 * whatever it returns (so may an Active GET the server answered with the block's location
 * for the client to pull: buffer_len of large_value_threshold or more, or of 1 KiB or more from a server this PE
 * maps); so may a GET of a value of 64 KiB or more that grew beyond
 * buffer_len since this client last read it (a remote Direct GET reads as many bytes as it last saw first). A remote
 * Direct GET of a block with 64 KiB of room or more may also use buffer[0 .. buffer_len) as landing space for the
 * block's header and a stale pointer's bytes (another key's, after a delete): on OK buffer[*value_len ..
 * buffer_len) may have changed, and on any other status the whole of it. buffer may be NULL when buffer_len == 0
 * (a size query). value_len must not be NULL.
 * TIMEOUT (*value_len 0) when the key's server did not answer. */
shmemcache_status_t shmemcache_get(shmemcache_t *cache, const void *key, size_t key_len, void *buffer,
                                   size_t buffer_len, size_t *value_len);

/* Removes key. Returns OK if it was present, NOT_FOUND if not, TIMEOUT if its server did not answer (the pair
 * may or may not have been removed). */
shmemcache_status_t shmemcache_delete(shmemcache_t *cache, const void *key, size_t key_len);

/*
 * Batches: many keys in one call, issued together rather than one after the other. Direct reads of different
 * keys go out back to back and complete together (on a server this PE maps, the keys with a cached pointer are
 * looked up together and then read in place one after another, each with a single GET's checks: stats
 * mget_local_items); the GETs a server must answer travel in one multi-get message per server and come back in
 * one reply (config mget_policy); Active SETs to one server share a burst (see README, "Batches"). A batch is
 * not atomic: its items take effect one by one, in no particular order across keys.
 *
 * Every item is processed and gets its own status in item->status: what shmemcache_get / shmemcache_set would
 * return for it alone (BUFFER_TOO_SMALL with value_len set to the size needed, NOT_FOUND, TIMEOUT when its
 * server did not answer, ...). An item with bad input (NULL key, key_len 0, key_len > max_key_len, a value
 * over max_value_len, value NULL with value_len > 0, buffer NULL with buffer_len > 0) gets INVALID_ARGUMENT,
 * KEY_TOO_LONG or VALUE_TOO_LARGE and changes nothing; the other items are processed as usual.
 *
 * The call returns OK once every item has its status (whatever those are), or an error about the call itself,
 * and then no item is touched: INVALID_ARGUMENT (cache NULL, or items NULL with count > 0), WRONG_ROLE (a
 * server PE), SHUT_DOWN (after shmemcache_finalize). count == 0 returns OK and does nothing.
 * When an item holds TIMEOUT because its server failed, shmemcache_last_error() on the calling thread says what
 * failed that server, whichever thread saw the failure: the first such item's for shmemcache_mget / mset; for
 * shmemcache_imget the first such server's, once test returns OK or wait returns (neither reads the items then).
 *
 * Ordering: the client's earlier operations (non-blocking ones included) on those servers take effect first,
 * and nothing of this thread's is left in flight to them on return (a blocking single-key call waits only for
 * this thread's earlier operations that could touch its key: requests on other keys may stay in flight). In shmemcache_mset, items with the same
 * key take effect in array order: the last one that succeeds wins, as a loop of shmemcache_set would leave it.
 * In shmemcache_mget, items may repeat a key; each gets a value.
 */
typedef struct {
  const void *key;             /* in */
  size_t key_len;              /* in */
  void *buffer;                /* in: where the value goes (may be NULL when buffer_len == 0: a size query) */
  size_t buffer_len;           /* in */
  size_t value_len;            /* out: the value's length; with BUFFER_TOO_SMALL the size needed; else 0 */
  shmemcache_status_t status;  /* out: as shmemcache_get; buffer is written only with OK */
} shmemcache_mget_item_t;
typedef struct {
  const void *key;             /* in */
  size_t key_len;              /* in */
  const void *value;           /* in (may be NULL when value_len == 0) */
  size_t value_len;            /* in */
  shmemcache_status_t status;  /* out: as shmemcache_set */
} shmemcache_mset_item_t;

/* Reads every item's key into its buffer, as shmemcache_get would. */
shmemcache_status_t shmemcache_mget(shmemcache_t *cache, shmemcache_mget_item_t *items, size_t count);
/* Stores every item's value under its key, as shmemcache_set would. */
shmemcache_status_t shmemcache_mset(shmemcache_t *cache, shmemcache_mset_item_t *items, size_t count);

/*
 * Non-blocking operations (paper 000 §IV). An i-call or b-call issues the operation and returns a request;
 * shmemcache_test and shmemcache_wait report its completion.
 *
 * Progress: requests issued back to back to one server go out together (one message-ring put and one doorbell
 * for the burst). A request is handed to its server at the latest when this client next tests or waits for a
 * request of that server, makes a blocking call on it, or issues more requests than its ring holds; until then
 * the server may not have seen it. Call shmemcache_test or shmemcache_wait, not a barrier, to make it progress.
 *
 * Buffer reuse:
 *   shmemcache_iset: key and value must stay untouched until the request completes.
 *   shmemcache_bset: key and value have been copied or sent when it returns; reuse them at once.
 *   shmemcache_iget: the key must stay untouched until completion; buffer and *value_len are written by
 *                    completion (as shmemcache_get would write them).
 *   shmemcache_bget: returns with the key buffer free; buffer and *value_len as for iget.
 * (This version copies keys at issue for every call, and values too, except an iset's value of 4 KiB or more
 * that a server on this node lets the client write into its memory: that one is read when the server's answer
 * comes, during a later test, wait or call. Do not rely on early reuse.)
 *
 * Ordering: operations of one client on the same key take effect in issue order, and a GET issued after a
 * SET of the same key by the same client sees that SET or a later one. Blocking calls are issue + wait and mix
 * freely with non-blocking ones.
 *
 * Errors found at issue (bad arguments, wrong role, after finalize, a server already failed: TIMEOUT) are
 * returned at once, *request is set to NULL and nothing is issued. A request whose server stops answering
 * completes with TIMEOUT, and so does every other request in flight to that server.
 * With max_outstanding requests in flight, issuing waits for the oldest first.
 * Every request is released by exactly one shmemcache_wait; a second wait on a released request returns
 * SHMEMCACHE_INVALID_ARGUMENT as long as its memory has not been reused by a newer request.
 */
typedef struct shmemcache_request shmemcache_request_t;

shmemcache_status_t shmemcache_iset(shmemcache_t *cache, const void *key, size_t key_len, const void *value,
                                    size_t value_len, shmemcache_request_t **request);
shmemcache_status_t shmemcache_bset(shmemcache_t *cache, const void *key, size_t key_len, const void *value,
                                    size_t value_len, shmemcache_request_t **request);
shmemcache_status_t shmemcache_iget(shmemcache_t *cache, const void *key, size_t key_len, void *buffer,
                                    size_t buffer_len, size_t *value_len, shmemcache_request_t **request);
shmemcache_status_t shmemcache_bget(shmemcache_t *cache, const void *key, size_t key_len, void *buffer,
                                    size_t buffer_len, size_t *value_len, shmemcache_request_t **request);
/* Does not wait for the request (it lets the runtime progress once and takes in the replies that have arrived):
 * SHMEMCACHE_IN_PROGRESS, or the operation's final status. Taking in a reply may send what its request needs
 * next (the commit of an iset's value written into the server's memory, a GET asked again, a SET sent again),
 * and that may wait for room in the server's reply ring, completing other requests meanwhile: bounded, as any
 * wait for a reply, by op_timeout_ms. Does not release the request. */
shmemcache_status_t shmemcache_test(shmemcache_t *cache, shmemcache_request_t *request);
/* Blocks until the request completes (at most op_timeout_ms per reply awaited), returns its final status and
 * releases it. */
shmemcache_status_t shmemcache_wait(shmemcache_t *cache, shmemcache_request_t *request);

/*
 * Sleeping until a reply lands (issue 17), as UCX's ucp_worker_get_efd / ucp_worker_arm: an event loop with
 * requests in flight may sleep in poll/epoll instead of polling shmemcache_test, and is woken when a reply
 * for this client arrives. Works where every server of the calling thread's requests in flight (its own, and
 * those it tested since its last arm) is on this node and maps this client's memory (shared-memory transports,
 * local_access on); elsewhere arm says NOT_SUPPORTED and the caller keeps polling.
 *
 * shmemcache_completion_fd: *fd is the handle's eventfd (owned by the handle: do not close it; valid until
 * shmemcache_finalize), registered for wake-ups on the first call (later calls return the same one). OK;
 * IO_ERROR when no eventfd could be made; WRONG_ROLE on a server.
 *
 * shmemcache_arm: call with every request's shmemcache_test made since the last arm (the usual loop: test what
 * is in flight, find nothing done, arm, sleep). Returns
 *   OK            the calling thread is armed: it may sleep on the fd (poll/epoll, EPOLLIN); the fd becomes
 *                 readable when a reply arrives for any request of this handle, so no request in flight
 *                 completes without waking it (the thread's own, and those another thread issued that it
 *                 tested since its last arm and found in progress: arm looks at their servers only). Sleep
 *                 with a timeout anyway if requests must time out on time: a request whose server stops
 *                 answering fails (TIMEOUT) after op_timeout_ms when a test or an arm notices; arm looks every
 *                 time, so a caller that arms again after each bounded sleep sees TIMEOUT within op_timeout_ms
 *                 and one sleep.
 *   IN_PROGRESS   do not sleep: something can be taken in now (a reply arrived, or another thread completed
 *                 requests since this thread's first test after its last arm, or no test was made since), or
 *                 a server has yet to take the fd (it does with its next reply), or the arm failed a server
 *                 for a request that waited op_timeout_ms (its requests complete with TIMEOUT), or another
 *                 thread is busy with the server of a request this thread tested since its last arm and found
 *                 in progress (another thread's, or its own that completed since), where none of this thread's
 *                 own is in flight (an arm does not wait for it). Test again, then arm again. The servers of
 *                 other threads' requests that this thread has not tested since its last arm are not looked
 *                 at: another thread busy there never makes this answer.
 *   NOT_SUPPORTED do not sleep: a server of the thread's own requests in flight, or of another thread's that
 *                 it tested since its last arm, cannot wake this client; keep polling (other servers do not
 *                 count).
 *   INVALID_ARGUMENT  before shmemcache_completion_fd; WRONG_ROLE on a server.
 * The thread stays armed until its next shmemcache_test or arm on the handle. An OK covers only the requests
 * in flight when arm was called: issue nothing between arm and the sleep. A request issued after an OK arm may
 * never wake the fd: it may sit staged in this client until the issuing thread's next test or arm sends it, and
 * its server may be one that cannot wake this client. After issuing, test (or arm again) before sleeping.
 * Read the fd (8 bytes) to make it unreadable again; it only says "something arrived", never what. Threads:
 * arming is per thread and any thread may arm; several armed threads sleeping on the one fd are all woken. A
 * thread that reads the fd back to 0 may take the readiness from another sleeper that has not seen it yet: where
 * several threads sleep on it, register it edge-triggered (EPOLLET) in each thread's epoll set and never read it.
 */
shmemcache_status_t shmemcache_completion_fd(shmemcache_t *cache, int *fd);
shmemcache_status_t shmemcache_arm(shmemcache_t *cache);

/* Non-blocking shmemcache_mget. Checks the call and every item as shmemcache_mget does, reads what Direct
 * operations answer, sends the rest to the servers, and returns OK with *request, which shmemcache_test and
 * shmemcache_wait report like any request: IN_PROGRESS until every item has its answer, then OK (the items hold
 * their own statuses, as after shmemcache_mget); wait releases it. An error about the call (the list above, or
 * INVALID_ARGUMENT for request NULL) sets *request to NULL and touches no item.
 * Ownership: the items array, each item's key and buffer stay the caller's to keep untouched (not read, not
 * written, not freed) until the request completes: items are answered as their replies come, during later
 * calls on this handle. An item whose status is no longer SHMEMCACHE_IN_PROGRESS is answered, but read the
 * items only after test returned OK or wait returned.
 * Ordering: as a non-blocking GET of each key: the client's earlier operations on those keys take effect
 * first; a later write of one of its keys by the same thread (set, store, incr, touch, delete; blocking or not)
 * takes effect after it, also for an item the library has to ask for again (a large value, a key the server may
 * have on flash, a reply that had no room left for it). Batches of more than 256 items
 * wait at issue for the replies to their earlier 256 before reading the next ones. */
shmemcache_status_t shmemcache_imget(shmemcache_t *cache, shmemcache_mget_item_t *items, size_t count,
                                     shmemcache_request_t **request);

/* Per-PE counters. Client-side fields move on clients, server-side fields on servers. */
typedef struct {
  /* client side */
  uint64_t gets, sets, deletes;
  uint64_t get_hits, get_misses;
  uint64_t direct_gets, active_gets;
  uint64_t direct_sets, active_sets;
  uint64_t directory_hits, directory_misses;
  uint64_t read_retries;        /* Direct GET attempts rejected by validation and retried */
  uint64_t lock_retries;        /* Direct SET CAS attempts that found the lock taken */
  uint64_t cas_lock_busy;       /* CAS failures: lock bit set -> back off */
  uint64_t cas_tag_mismatch;    /* CAS failures: tag differs -> Active SET */
  uint64_t cas_version_mismatch;/* CAS failures: version differs -> retry with the returned version */
  uint64_t direct_fallbacks;    /* Direct operations that gave up and went Active */
  uint64_t messages_sent, messages_received;
  uint64_t recency_updates;     /* non-intrusive recency CASes after Direct operations */
  uint64_t directory_expired;   /* directory pointers not used because their recency is below the bar */
  uint64_t expiration_bar_updates; /* times this client learned a higher expiration bar */
  /* server side */
  uint64_t items, bytes_used;
  uint64_t evictions, eviction_batches;
  uint64_t spilled_items, spill_reads;
  uint64_t active_ops_served;
  uint64_t no_space_errors;
  uint64_t retiered;            /* pairs a batch eviction kept because a client had advanced their recency */
  uint64_t max_eviction_pause_us; /* longest time one operation spent evicting */
  uint64_t pages_moved;         /* slab pages that changed class (memory following the workload) */
  uint64_t expiration_bar;      /* this server's current expiration bar (epochs below it were evicted) */
  uint64_t payload_bytes;  /* keys + values of the pairs in RAM now */
  uint64_t spill_bytes_written; /* SSD tier: bytes written to segments */
  uint64_t spill_reclaimed_segments; /* SSD tier: oldest segments dropped whole to make room */
  uint64_t spill_checksum_failures;  /* SSD tier: records that failed verification (answered NOT_FOUND) */
  uint64_t spill_io_errors;     /* SSD tier: failed or short reads and writes (a read, or a write that could
                                   not be retried, is answered NOT_FOUND) */
  uint64_t spill_async_reads;   /* SSD tier: reads done by the I/O thread while the server went on serving */
  uint64_t spill_mmap_reads;    /* SSD tier: reads through a mapping (small records) rather than pread */
  uint64_t spill_enospc_recoveries; /* SSD tier: writes that succeeded again after the disk was full (ENOSPC):
                                       retried after dropping the oldest segment, or once space came back */
  /* client side: large values (config large_value_threshold) and the Direct/Active policy (direct_policy) */
  uint64_t large_gets_pulled;   /* Active GETs whose value the client pulled from the block with one get */
  uint64_t large_pull_retries;  /* pulls that found the block changed, locked or gone and asked again inline */
  uint64_t large_sets_landed;   /* Active SETs whose value was put into the server's landing slot */
  uint64_t policy_active_ops;   /* GETs and SETs sent Active without a Direct attempt because the policy said so */
  uint64_t policy_set_path;     /* what the policy decided for SETs: 0 = not a client, 1 = Direct, 2 = Active */
  uint64_t policy_get_path;     /* what the policy decided for GETs: 0 = not a client, 1 = Direct, 2 = Active */
  uint64_t policy_reason;       /* why: 1 = direct_ops 0, 2 = direct_policy always, 3 = direct_policy never,
                                   4 = auto, the transport needs no target CPU for one-sided operations (both
                                   Direct), 5 = auto, UCX tcp carries them (both Active: a Direct SET is 5-6
                                   round trips, and every one-sided operation waits for the server's CPU, which
                                   an Active operation needs once) */
  /* client side, on-node fast path (local_access) */
  uint64_t local_gets;          /* GETs whose value this PE read from the block by loads through a mapping of
                                   the server's memory: Direct GETs, and Active GETs answered by location and
                                   pulled (also in large_gets_pulled) */
  uint64_t local_sets;          /* Direct SETs and incrs written by stores through a mapping of the server's memory */
  /* client side, memcached's contract */
  uint64_t direct_incrs;        /* shmemcache_incr calls done one-sided under the block's lock, without the
                                   server (incrs take the path SETs take: policy_set_path) */
  /* client side, batches (config mget_policy) */
  uint64_t mget_messages;       /* multi-get messages sent: one per server per mget, more when its reply ring
                                   is too small for every value */
  uint64_t mget_message_items;  /* mget items answered through them (also counted in active_gets) */
  /* client side, on-node writes seen from off the mapping */
  uint64_t unchecked_copies;    /* remote Direct GETs of a block last written through a mapping (no checksum),
                                   confirmed by re-reading its target word after the copy */
  /* idle servers (config idle_spin_us) */
  uint64_t idle_sleeps;         /* server side: naps an idle server took on its doorbell instead of spinning */
  uint64_t doorbell_wakes;      /* client side: sleeping servers this client woke after ringing their doorbell */
  /* either side, on-node fast path (local_access) */
  uint64_t cpu_word_atomics;    /* how this PE updates blocks' lock, version and recency words: 1 = CPU atomics
                                   through shared memory (every PE of the job maps every server and UCX runs its
                                   atomics on the CPU there, agreed at init, and this PE's local_access is not
                                   0), 2 = the runtime's atomics, 0 = not set up */
  uint64_t published_epoch_gets;/* client side: on-node Direct GETs that took the server's recency epoch from
                                   the word the server publishes (while it serves and sleeps when idle: config
                                   idle_spin_us) instead of reading this PE's clock for it (a pair with an
                                   expiry still reads the clock once, for the expiry) */
  uint64_t direct_expiry_asks;  /* client side: Direct GETs that read a valid copy of a pair with an expiry but could
                                   not judge it (no recent reply from that server to bound its clock), so asked
                                   the server: counted in active_gets, and in local_gets when read on-node */
  /* client side, remote block reads (no mapping of the server: local_access 0, or another node) by the form of
     the read that returned the value: Direct GETs, and Active GETs answered by location and pulled (also in
     large_gets_pulled); a valid copy that was then asked of the server (direct_expiry_asks) and pulled counts
     both reads. shmemcache_mget's batch reads are not counted here */
  uint64_t remote_gets_whole;   /* one get of the whole block */
  uint64_t remote_gets_head_value; /* where a quiet may wait for every peer (UCX tcp): header and value in one
                                   get, the target word in another, for a block whose room beyond the value is
                                   16 KiB or more */
  uint64_t remote_gets_split;   /* elsewhere, from 64 KiB of room: header, value straight into the caller's
                                   buffer and target word, three non-blocking gets and one quiet */
  /* large Active stores (config large_value_threshold) */
  uint64_t large_sets_placed;   /* client side: blocking SETs and stores of a large value written by this client
                                   straight into a block its server reserved (through a mapping of the server's
                                   memory), then published by the server without reading the value */
  uint64_t large_value_copies;  /* server side: Active SETs and stores of a large value whose bytes this server
                                   copied into a block (from a landing slot or the message) */
  /* expiry (memcached's contract) */
  uint64_t expired_crawled;     /* server side: expired pairs this server's expiry crawl found by walking its hash
                                   table and freed (a ttl written by a Direct store leaves the server no hint of
                                   the expiry; the crawl runs when the server is idle, and before it evicts live
                                   pairs) */
  /* client side, batches on the node (local_access) */
  uint64_t mget_local_items;    /* shmemcache_mget / shmemcache_imget items answered by the batched read through
                                   the mapping: every item's pointer looked up first, then each block read with
                                   the seqlock of a single on-node GET (also counted where that GET counts:
                                   gets, direct_gets, get_hits or get_misses, local_gets, directory_hits) */
  /* idle servers, continued */
  uint64_t idle_spins_contended; /* server side, idle_spin_us adaptive: waits for work whose spin was cut to
                                   SHMEMCACHE_IDLE_SPIN_CONTENDED_US because other threads wanted the server's
                                   core (its spin's thread switched out involuntarily, which a yield that hands
                                   the core to another thread is, in 2 or more of a window of 16 observed
                                   intervals of 64 polls, windows spanning many spins; until a window has none) */
} shmemcache_stats_t;

/* Fills *stats for this PE. Returns INVALID_ARGUMENT for NULL arguments. Works after finalize (the last
 * values). */
shmemcache_status_t shmemcache_get_stats(const shmemcache_t *cache, shmemcache_stats_t *stats);

/*
 * memcached's contract: expiry, flags, CAS tokens, add/replace/append/prepend, counters, flush, server stats.
 *
 * Expiry without shared clocks. A pair stored with ttl_ms > 0 expires ttl_ms after the store, measured on its
 * server's clock. It is never reported expired before ttl_ms has passed, and never returned by any call later
 * than ttl_ms + config.recency_range_ms after the store. Clients never compare their clock with a server's: a
 * client reading a pair one-sided bounds the server's time from the clock stamp on that server's replies and
 * asks the server when it cannot tell. Expired pairs free their memory lazily (the next operation that meets
 * them) or when the server needs room.
 * Tokens (memcached's "CAS unique"). Every pair has a token, never 0, that changes on every modification by any
 * call (shmemcache_set included) and is never reused for the same key; shmemcache_touch keeps it, up to 65535
 * touches since the pair's last modification (the block keeps that lag in 16 bits): the next touch then gives it
 * a new token, as if it had been modified.
 * Argument checks are those of shmemcache_set / shmemcache_get (NULL handle or key, empty key: INVALID_ARGUMENT;
 * KEY_TOO_LONG; VALUE_TOO_LARGE; WRONG_ROLE on a server; SHUT_DOWN after finalize); on any such error nothing is
 * changed and no output is written. TIMEOUT as in "Failures": the operation may or may not have taken effect.
 */
typedef enum {
  SHMEMCACHE_MODE_SET = 0, /* store unconditionally */
  SHMEMCACHE_MODE_ADD,     /* store only if the key is absent; else EXISTS. Atomic: of many clients adding the
                              same key at once, exactly one gets OK */
  SHMEMCACHE_MODE_REPLACE, /* store only if the key is present; else NOT_STORED */
  SHMEMCACHE_MODE_APPEND,  /* add value after the present one (flags and expiry stay); absent: NOT_STORED */
  SHMEMCACHE_MODE_PREPEND  /* add value before the present one (idem) */
} shmemcache_mode_t;

typedef struct {
  shmemcache_mode_t mode;  /* a zeroed struct means: plain set, flags 0, no expiry, unconditional */
  uint32_t flags;          /* opaque, stored with the pair, returned by shmemcache_fetch */
  uint64_t ttl_ms;         /* 0 = never expires; else the pair expires ttl_ms after this store */
  uint64_t cas;            /* 0 = unconditional; else store only if the pair's token equals this */
} shmemcache_store_options_t;

/* Stores value under key as *options says; options NULL = plain set (shmemcache_set). *cas_out (may be NULL)
 * receives the pair's new token on OK. Returns OK; with options->cas != 0: NOT_FOUND if the key is absent,
 * EXISTS if its token differs (checked first, in every mode); EXISTS (add of a present key); NOT_STORED
 * (replace, append or prepend of an absent key); VALUE_TOO_LARGE (also an append/prepend whose result exceeds
 * max_value_len); INVALID_ARGUMENT (mode out of range, or the argument errors above); NO_SPACE. On any status
 * but OK nothing changed. A plain set, and a store in mode SET, REPLACE, APPEND or PREPEND with any flags, ttl_ms
 * and cas, may be done one-sided (under the pair's lock, with the server's answers) when the client holds the pair's
 * location and the value (append/prepend: the combined value) fits its block; ADD is a request to the server. */
shmemcache_status_t shmemcache_store(shmemcache_t *cache, const void *key, size_t key_len, const void *value,
                                     size_t value_len, const shmemcache_store_options_t *options,
                                     uint64_t *cas_out);
/* shmemcache_get plus the pair's flags and token: on OK *flags and *cas (either may be NULL) are set; on any
 * other status they are unchanged. Same buffer rules and statuses as shmemcache_get (NOT_FOUND also for an
 * expired pair). */
shmemcache_status_t shmemcache_fetch(shmemcache_t *cache, const void *key, size_t key_len, void *buffer,
                                     size_t buffer_len, size_t *value_len, uint32_t *flags, uint64_t *cas);
/* Non-blocking shmemcache_fetch (the rules of shmemcache_iget): the key must stay untouched until completion;
 * buffer, *value_len, *flags and *cas are written by completion. */
shmemcache_status_t shmemcache_ifetch(shmemcache_t *cache, const void *key, size_t key_len, void *buffer,
                                      size_t buffer_len, size_t *value_len, uint32_t *flags, uint64_t *cas,
                                      shmemcache_request_t **request);
/* Non-blocking shmemcache_store (see "Non-blocking operations" for progress, ordering and buffer rules; key and
 * value as for shmemcache_iset, *options is read at issue). Returns OK with *request, which shmemcache_test and
 * shmemcache_wait report with the status shmemcache_store would have returned for the same call: OK, EXISTS,
 * NOT_STORED, NOT_FOUND, VALUE_TOO_LARGE (also an append/prepend whose result exceeds max_value_len), NO_SPACE,
 * TIMEOUT; on any status but OK the store changed nothing (TIMEOUT: it may or may not have). *cas_out (may be
 * NULL; else it must stay valid until completion) receives the pair's new token by completion with OK and is
 * left unchanged otherwise. options NULL or zeroed: a plain set, which may be done one-sided at issue (the
 * request is then complete at once) exactly as shmemcache_iset; so may a store in mode SET, REPLACE, APPEND or
 * PREPEND with any flags, ttl_ms and cas, as shmemcache_store; ADD is a request to the server.
 * Errors found at issue set *request to NULL, issue nothing and leave *cas_out unchanged: those of
 * shmemcache_store (INVALID_ARGUMENT also for a mode out of range or request NULL; KEY_TOO_LONG;
 * VALUE_TOO_LARGE for value_len > max_value_len; WRONG_ROLE; SHUT_DOWN), and TIMEOUT when the key's server had
 * failed. Ordering as every request of this client: its earlier operations on the key take effect first, so an
 * add issued after an istore of the same key by the same client sees it, and a later get or fetch returns it. */
shmemcache_status_t shmemcache_istore(shmemcache_t *cache, const void *key, size_t key_len, const void *value,
                                      size_t value_len, const shmemcache_store_options_t *options,
                                      uint64_t *cas_out, shmemcache_request_t **request);
/* New expiry for a present pair: ttl_ms from now (0 = never). Its value, flags and token stay (the token: up to
 * 65535 touches, see "Tokens" above). OK, or NOT_FOUND
 * if the key is absent (or expired). */
shmemcache_status_t shmemcache_touch(shmemcache_t *cache, const void *key, size_t key_len, uint64_t ttl_ms);
/* The value must be an ASCII unsigned decimal of at most 20 digits, read by memcached's rules (its strtoull and
 * end check): leading blanks and one sign are allowed ("-0" is 0; "-5" is NOT_NUMERIC), so is anything after a
 * blank or a NUL following the digits ("5 x" is 5), and leading zeros ("000...05" of any length); empty, blank
 * only, no digit first, text glued to the digits ("5x", "0x10", "1.5") and numbers above 2^64-1 are NOT_NUMERIC.
 * delta > 0 adds
 * (wrapping at 2^64), delta < 0 subtracts and stops at 0. The result is stored as decimal (flags and expiry
 * stay, the token changes) and returned in *new_value (may be NULL). OK; NOT_FOUND (absent: incr does not
 * create); NOT_NUMERIC (nothing changed); NO_SPACE (a longer number needs a block that cannot be had). Atomic
 * across all clients: N clients doing M increments each add exactly N*M. Done one-sided where a SET would be
 * (stats direct_incrs), under the same lock the server's incr and every other write take. */
shmemcache_status_t shmemcache_incr(shmemcache_t *cache, const void *key, size_t key_len, int64_t delta,
                                    uint64_t *new_value);
/* Non-blocking shmemcache_touch and shmemcache_incr (the rules of shmemcache_istore): OK with *request, whose
 * completion status is what the blocking call would have returned (touch: OK, NOT_FOUND; incr: OK, NOT_FOUND,
 * NOT_NUMERIC, NO_SPACE; TIMEOUT); *new_value (may be NULL; else valid until completion) is written by
 * completion with OK. An incr may be done one-sided at issue where shmemcache_incr would be (then the request
 * is complete at once). Errors at issue as shmemcache_istore: *request NULL, nothing issued or written. */
shmemcache_status_t shmemcache_itouch(shmemcache_t *cache, const void *key, size_t key_len, uint64_t ttl_ms,
                                      shmemcache_request_t **request);
shmemcache_status_t shmemcache_iincr(shmemcache_t *cache, const void *key, size_t key_len, int64_t delta,
                                     uint64_t *new_value, shmemcache_request_t **request);
/* Non-blocking shmemcache_delete (the rules of shmemcache_istore): OK with *request, whose completion status is
 * what shmemcache_delete would have returned: OK if the key was present (a pair in RAM, or a live copy in the
 * SSD tier, which the delete drops as the blocking call does), NOT_FOUND if not, TIMEOUT (it may or may not have
 * been removed). It is always a request to the server, as shmemcache_delete is; this client's pointer to the
 * pair is dropped at issue. Ordering as every request of this client: its earlier operations on the key take
 * effect first, and a later get, fetch, store or add of the key by this client sees the key removed. Errors at
 * issue as shmemcache_istore (INVALID_ARGUMENT for a NULL or empty key or request NULL, KEY_TOO_LONG,
 * WRONG_ROLE, SHUT_DOWN, TIMEOUT when the key's server had failed): *request NULL, nothing issued or removed. */
shmemcache_status_t shmemcache_idelete(shmemcache_t *cache, const void *key, size_t key_len,
                                       shmemcache_request_t **request);
/* Removes every pair from every server (RAM and SSD tier); pairs stored after it returns are kept. Any client
 * may call it. OK, or TIMEOUT if a server did not answer (the others have flushed); WRONG_ROLE, SHUT_DOWN,
 * INVALID_ARGUMENT (NULL handle). */
shmemcache_status_t shmemcache_flush_all(shmemcache_t *cache);
/* The server-side counters of server `server` (0 .. num_servers-1: items, bytes_used, evictions, payload_bytes,
 * active_ops_served, ...; the client-side fields are 0), read one-sided without disturbing the server; sum them
 * over the servers for the job. Freshness: a server publishes its counters when it goes idle after serving
 * (so once the requests a client made have been answered and the server waits for work, they are included) and
 * at most every 10 ms while it stays busy. A client's one-sided writes (Direct SET) change no counter.
 * OK; INVALID_ARGUMENT (NULL handle or stats, server out of range); WRONG_ROLE; SHUT_DOWN; TIMEOUT (the
 * server failed). */
shmemcache_status_t shmemcache_server_stats(shmemcache_t *cache, int server, shmemcache_stats_t *stats);

/* Collective. Clients complete their requests in flight and tell every server they are done (failed servers
 * included, without waiting on them); servers return from shmemcache_serve once all clients have; symmetric
 * memory is freed; OpenSHMEM is finalized only if shmemcache_init started it. The handle stays
 * valid for shmemcache_get_stats and returns SHUT_DOWN from every other call until shmemcache_destroy. */
shmemcache_status_t shmemcache_finalize(shmemcache_t *cache);

/* Releases the handle itself (after finalize; on a handle not finalized it finalizes first). NULL is a no-op. */
void shmemcache_destroy(shmemcache_t *cache);

#ifdef __cplusplus
}
#endif

#endif /* SHMEMCACHE_SHMEMCACHE_H_ */

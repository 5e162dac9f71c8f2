/* A Promela model of mbcheck's bundled `epi-load` protocol, for bench_peers to time Spin's
 * exhaustive search against mbcheck's on the same protocol and shape.
 *
 * What it models (spec/pipeline.hpp's ProducerConsumerPipeline as EpiLoadPipeline, driven by
 * spec/kernels/residual_add.hpp's residual_add_kernel, one CTA, no mutation):
 *   - full_bar[s] / empty_bar[s], s < STAGES: mbarriers as (phase parity, pending arrivals, pending
 *     tx). full_bar[s] expects 1 arrival (the producer's arrive.expect_tx) plus the tile's bytes
 *     (counted in 16-byte vectors); empty_bar[s] one arrival per consumer. Each barrier operation
 *     is one indivisible transition (d_step); the one that completes a phase flips the parity
 *     and re-arms the count. A wait is a guard on the parity (try_wait.parity until true, as
 *     the GPU sees it): the process blocks until the phase completes, as an mbcheck wait is
 *     not enabled before.
 *   - producer: the load warp's elected lane. Per tile: wait empty_bar[s] (first phase -1, parity
 *     1), arrive.expect_tx on full_bar[s], issue the bulk copy (issued[s]++).
 *   - copy(s): the bulk copies into stage s (one in flight per stage at most: the next is
 *     issued after the consumers released what the last one filled). It waits for the issue,
 *     starts writing the stage (one transition), then lands: the stage holds the tile and
 *     complete_tx is performed on full_bar[s] (one transition, as an mbcheck copy agent's landing).
 *   - consumer(me), me < THREADS: the store warp's lanes. Per tile: wait full_bar[s]; a lane that
 *     owns a vector of the tile (me < VECS, vectors dealt round-robin) reads the stage in a
 *     window of two transitions; arrive on empty_bar[s].
 *   Data races are assertions: a copy may not start writing a stage while a consumer reads it,
 *   and a read must see the stage holding its own tile, from start to end, with no copy
 *   writing (the output check of mbcheck's epi-load, reduced to "read the right tile").
 *   Deadlocks are invalid end states (a process blocked in a wait when nothing can move).
 *
 * Left out: the load warp's other lanes, init + __syncthreads (done atomically in init), the
 * values of the floats (a stage records which tile it holds), accum/D (read-only and written
 * once per element: no race possible), several CTAs, ragged tiles, copies in pieces. Races
 * are found as overlapping windows in some interleaving, not by happens-before as mbcheck
 * and Relacy find them; with an exhaustive search of these windows the two agree here.
 *
 * Shape macros (spin -DSTAGES=4 -DTHREADS=4 -DTILES=8 -a epi_load.pml): STAGES (<= 8),
 * THREADS (consumer lanes), TILES (<= 255), VECS (16-byte vectors per tile = tile-elems / 4),
 * BUG (1: consumers arrive on empty_bar[s] before reading, mbcheck's release-before-read, a race;
 * 2: empty_bar[] expects one arrival too many, consumer-count-plus-one, a deadlock).
 * Then: gcc -O2 -DSAFETY -o pan pan.c && ./pan -m100000 (invalid end states are safety
 * properties: -DSAFETY keeps them checked).
 */
#ifndef STAGES
#define STAGES 4
#endif
#ifndef THREADS
#define THREADS 4
#endif
#ifndef TILES
#define TILES 8
#endif
#ifndef VECS
#define VECS 1
#endif
#ifndef BUG
#define BUG 0
#endif

typedef Mbarrier {
  bit parity;    /* parity of the number of completed phases */
  byte pending;  /* arrivals still expected in the current phase */
  byte tx        /* 16-byte vectors still expected in the current phase */
};

Mbarrier full_bar[STAGES];   /* full and empty are Promela keywords */
Mbarrier empty_bar[STAGES];
byte issued[STAGES];   /* bulk copies issued to each stage */
byte holds[STAGES];    /* the tile a stage holds (255: none yet) */
bool writing[STAGES];  /* a copy is writing the stage */
byte reading[STAGES];  /* consumers reading the stage */

/* arrivals and tx change in one step; completing the phase flips the parity and re-arms. */
inline update(bar, arrivals, add_tx, sub_tx, count) {
  assert(bar.pending >= arrivals && bar.tx + add_tx >= sub_tx);
  bar.pending = bar.pending - arrivals;
  bar.tx = bar.tx + add_tx - sub_tx;
  if
  :: bar.pending == 0 && bar.tx == 0 -> bar.parity = 1 - bar.parity; bar.pending = count
  :: else -> skip
  fi
}

#define CONSUMER_COUNT (THREADS + (BUG == 2 -> 1 : 0))

proctype producer() {
  byte t = 0, s;
  do
  :: t < TILES ->
     s = t % STAGES;
     (empty_bar[s].parity != (t / STAGES + 1) % 2);          /* wait for phase t/STAGES - 1 */
     d_step { update(full_bar[s], 1, VECS, 0, 1) };          /* arrive.expect_tx(tile bytes) */
     issued[s]++;                                        /* cp.async.bulk */
     t++
  :: else -> break
  od
}

proctype copy(byte s) {
  byte t = s;
  do
  :: t < TILES ->
     (issued[s] > t / STAGES);
     d_step { assert(reading[s] == 0); writing[s] = 1 };  /* starts writing the stage */
     d_step { holds[s] = t; writing[s] = 0; update(full_bar[s], 0, 0, VECS, 1) }  /* lands */
     t = t + STAGES
  :: else -> break
  od
}

proctype consumer(byte me) {
  byte t = 0, s;
  do
  :: t < TILES ->
     s = t % STAGES;
     (full_bar[s].parity != (t / STAGES) % 2);                /* wait for phase t/STAGES */
#if BUG == 1
     d_step { update(empty_bar[s], 1, 0, 0, CONSUMER_COUNT) };  /* released before it is read */
#endif
     if
     :: me < VECS ->
        d_step { assert(!writing[s] && holds[s] == t); reading[s]++ };
        d_step { assert(!writing[s] && holds[s] == t); reading[s]-- }
     :: else -> skip
     fi;
#if BUG != 1
     d_step { update(empty_bar[s], 1, 0, 0, CONSUMER_COUNT) };
#endif
     t++
  :: else -> break
  od
}

init {
  byte i;
  atomic {
    i = 0;
    do
    :: i < STAGES -> full_bar[i].pending = 1; empty_bar[i].pending = CONSUMER_COUNT; holds[i] = 255; i++
    :: else -> break
    od;
    run producer();
    i = 0;
    do
    :: i < STAGES -> run copy(i); i++
    :: else -> break
    od;
    i = 0;
    do
    :: i < THREADS -> run consumer(i); i++
    :: else -> break
    od
  }
}

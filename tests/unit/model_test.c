// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * model_test.c - randomized operation sequences against a naive reference
 * model of PTask's dataflow semantics.
 *
 * Each run builds random graphs (chains, fan-out, sticky ports, cycles,
 * unfed ports, capacities 1..MCAP) and performs thousands of random
 * operations through the harness: create/push/pull/release tagged
 * datablocks, EXEC_TAKE in random batches, EXEC_COMPLETE with fresh
 * (copied) or passed-through outputs, wrong completes, failing statuses,
 * run, terminate, graph close and reopen by name, client destruction,
 * executor unregistration.  The model predicts every return code; after
 * every operation the whole state is compared: every port occupant, every
 * channel's contents in order, every ptask state, every datablock's
 * reference count and every client's holds, the ready list (FIFO across
 * operations), and the object counts.
 *
 * The model is deliberately naive: after each step it moves datablocks
 * until nothing moves (a fixpoint), where the core moves them by
 * recursion.  Bounded channels with one producer and one consumer are
 * deterministic, so both must end in the same state.  Only the order of
 * ptasks queued by one step is left open: each step stamps what it queues
 * and the core's ready list must be in stamp order.
 *
 * Seeds: a fixed list, plus one from --seed=N or $PTASK_MODEL_SEED (else
 * from the clock); the seed is printed, and a failure names the seed and
 * the operation.  --ops=N sets the operations per seed.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tests/unit/harness.h"

#define MG	48	/* graphs built per run */
#define MP	4	/* ptasks per graph */
#define MPORTS	5	/* ports per ptask */
#define MCH	32	/* channels per graph */
#define MCAP	3	/* largest channel capacity */
#define MDB	40000	/* datablocks per run */
#define MINV	512	/* invocations alive at once */
#define NU	3	/* user clients */
#define NX	2	/* executor clients */
#define NS	(NU + NX)
#define MHELD	64	/* distinct datablocks one client holds */
#define NAMES	6	/* graph names are m0..m5 */
#define TAG0	0x7a67000000000000ULL

struct m_port {
	u32 handle;
	u32 kind;
	int occ;		/* datablock index, -1: Unoccupied */
	int in;			/* input/sticky: channel index, -1: none */
};

struct m_ptask {
	u32 handle;
	u32 state;
	u32 nports;
	struct m_port port[MPORTS];
	u64 stamp;		/* when it was queued */
	int inv;		/* running invocation, -1: none */
};

struct m_chan {
	u32 handle;
	int sp, sport;		/* source ptask and port, -1: graph input */
	int dp, dport;		/* destination, -1: graph output */
	u32 cap, head, count;
	int q[MCAP];
};

struct m_graph {
	bool live;		/* not freed */
	u32 handle;
	int name;		/* index into m0..m5 */
	u32 state;
	u32 np, nch;
	struct m_ptask p[MP];
	struct m_chan ch[MCH];
	bool opened[NU];
};

struct m_inv {
	bool used;
	u64 id;
	int x;			/* executor slot */
	int g, p;		/* -1: orphaned */
	u32 nports;
	int in[MPORTS];
};

struct m_db {
	u32 handle;
	u32 refs;
};

static struct model {
	u64 seed, rng;
	u32 op;
	bool failed;
	u64 stamp;
	struct ptask_client *c[NS];
	bool exec[NS];
	u32 ng;
	struct m_graph g[MG];
	struct m_inv inv[MINV];
	u32 ndb;
	struct m_db db[MDB];
	u16 holds[NS][MDB];
	int held[NS][MHELD];	/* distinct datablocks a client holds */
	u32 nheld[NS];
	struct h_take take;
	/* statistics */
	u64 n_ok, n_err, n_taken, n_pulled;
	u32 n_built;
	u32 errs[256];
} *M;

static unsigned long opt_ops = 30000;
static bool opt_verbose;

/* Errors seen, by errno, for the statistics line. */
static void m_count_err(int err)
{
	M->n_err++;
	if (-err > 0 && -err < 256)
		M->errs[-err]++;
}

static bool m_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static bool m_fail(const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (!M->failed)
		h_diag("model: seed %llu op %u: %s",
		       (unsigned long long)M->seed, M->op, buf);
	M->failed = true;
	CHECK(0 && "model mismatch");
	return false;
}

/* The core's result @got must be the model's @want. */
#define EXPECT(got, want, what) do {					\
	int g_ = (got), w_ = (want);					\
									\
	if (g_ != w_)							\
		return m_fail("%s: got %s, want %s", (what),		\
			      h_errname(g_), h_errname(w_));		\
	if (g_)								\
		m_count_err(g_);					\
	else								\
		M->n_ok++;						\
} while (0)

#define MASSERT(cond, ...) do {						\
	if (!(cond))							\
		return m_fail(__VA_ARGS__);				\
} while (0)

static u32 rnd(u32 n)
{
	return h_rand_below(&M->rng, n);
}

static bool chance(u32 percent)
{
	return rnd(100) < percent;
}

/* ------------------------------------------------------------------ */
/* The model's datablocks, holds and channels.                        */

static void db_get(int d)
{
	if (M->db[d].refs == 0)
		m_fail("model: get on dead datablock %d", d);
	M->db[d].refs++;
}

static void db_put(int d)
{
	if (M->db[d].refs == 0)
		m_fail("model: put on dead datablock %d", d);
	else
		M->db[d].refs--;
}

static void hold_add(int s, int d)
{
	if (M->holds[s][d]++ == 0)
		M->held[s][M->nheld[s]++] = d;
}

/* Drop one of client @s's references to @d (it holds one). */
static void hold_drop(int s, int d)
{
	u32 i;

	if (--M->holds[s][d] == 0) {
		for (i = 0; i < M->nheld[s]; i++)
			if (M->held[s][i] == d)
				break;
		M->held[s][i] = M->held[s][--M->nheld[s]];
	}
	db_put(d);
}

static int chan_pop(struct m_chan *ch)
{
	int d = ch->q[ch->head];

	ch->head = (ch->head + 1) % ch->cap;
	ch->count--;
	return d;
}

/* @d's reference moves into the channel. */
static void chan_push(struct m_chan *ch, int d)
{
	ch->q[(ch->head + ch->count) % ch->cap] = d;
	ch->count++;
}

static bool inputs_ready(const struct m_ptask *p)
{
	u32 i, plain = 0;

	for (i = 0; i < p->nports; i++) {
		if (p->port[i].kind == PTASK_PORT_OUTPUT)
			continue;
		if (p->port[i].occ < 0)
			return false;
		plain += p->port[i].kind == PTASK_PORT_INPUT;
	}
	return plain > 0;
}

/* Move datablocks in @g until nothing moves; queue with M->stamp. */
static void settle_graph(struct m_graph *g)
{
	bool changed;
	u32 i, j, k;

	if (!g->live || g->state == PTASK_GRAPH_TERMINATED ||
	    g->state == PTASK_GRAPH_FAILED)
		return;
	do {
		changed = false;
		for (i = 0; i < g->np; i++) {
			struct m_ptask *p = &g->p[i];

			for (j = 0; j < p->nports; j++) {
				struct m_port *pt = &p->port[j];
				struct m_chan *ch;
				bool room = true;

				if (pt->kind != PTASK_PORT_OUTPUT) {
					if (pt->in < 0)
						continue;
					ch = &g->ch[pt->in];
					while (ch->count &&
					       (pt->occ < 0 ||
						pt->kind == PTASK_PORT_STICKY)) {
						if (pt->occ >= 0)
							db_put(pt->occ);
						pt->occ = chan_pop(ch);
						changed = true;
					}
					continue;
				}
				if (pt->occ < 0)
					continue;
				for (k = 0; k < g->nch; k++)
					if (g->ch[k].sp == (int)i &&
					    g->ch[k].sport == (int)j &&
					    g->ch[k].count == g->ch[k].cap)
						room = false;
				if (!room)
					continue;
				for (k = 0; k < g->nch; k++) {
					if (g->ch[k].sp == (int)i &&
					    g->ch[k].sport == (int)j) {
						db_get(pt->occ);
						chan_push(&g->ch[k], pt->occ);
					}
				}
				db_put(pt->occ);
				pt->occ = -1;
				changed = true;
			}
		}
		for (i = 0; i < g->np; i++) {
			struct m_ptask *p = &g->p[i];
			bool outs_empty = true;

			for (j = 0; j < p->nports; j++)
				if (p->port[j].kind == PTASK_PORT_OUTPUT &&
				    p->port[j].occ >= 0)
					outs_empty = false;
			if (p->state == PTASK_STATE_COMPLETED && outs_empty) {
				p->state = PTASK_STATE_WAITING;
				changed = true;
			}
			if (p->state == PTASK_STATE_WAITING &&
			    g->state == PTASK_GRAPH_RUNNING &&
			    inputs_ready(p)) {
				p->state = PTASK_STATE_QUEUED;
				p->stamp = M->stamp;
				changed = true;
			}
		}
	} while (changed);
}

static void settle(void)
{
	u32 i;

	for (i = 0; i < M->ng; i++)
		settle_graph(&M->g[i]);
}

static void inv_free(int v)
{
	u32 i;

	for (i = 0; i < M->inv[v].nports; i++)
		if (M->inv[v].in[i] >= 0)
			db_put(M->inv[v].in[i]);
	M->inv[v].used = false;
}

/* ptask_graph_stop: drop queued work, orphan invocations, drop data. */
static void graph_stop(struct m_graph *g, u32 state)
{
	u32 i, j;

	g->state = state;
	for (i = 0; i < g->np; i++) {
		struct m_ptask *p = &g->p[i];

		if (p->inv >= 0) {
			struct m_inv *v = &M->inv[p->inv];

			for (j = 0; j < v->nports; j++) {
				if (v->in[j] >= 0)
					db_put(v->in[j]);
				v->in[j] = -1;
			}
			v->g = v->p = -1;
			p->inv = -1;
		}
		p->state = PTASK_STATE_WAITING;
		for (j = 0; j < p->nports; j++) {
			if (p->port[j].occ >= 0)
				db_put(p->port[j].occ);
			p->port[j].occ = -1;
		}
	}
	for (i = 0; i < g->nch; i++)
		while (g->ch[i].count)
			db_put(chan_pop(&g->ch[i]));
}

static bool stopped(const struct m_graph *g)
{
	return g->state == PTASK_GRAPH_TERMINATED ||
	       g->state == PTASK_GRAPH_FAILED;
}

/* User @s closes @g; the last close frees it. */
static void graph_close(struct m_graph *g, int s)
{
	u32 i;

	g->opened[s] = false;
	for (i = 0; i < NU; i++)
		if (g->opened[i])
			return;
	if (!stopped(g))
		graph_stop(g, PTASK_GRAPH_TERMINATED);
	g->live = false;
}

/* Could a GRAPH_OPEN by name find @g? */
static bool findable(const struct m_graph *g)
{
	return g->live && !stopped(g);
}

static struct m_graph *find_name(int name)
{
	u32 i;

	for (i = 0; i < M->ng; i++)
		if (M->g[i].name == name && findable(&M->g[i]))
			return &M->g[i];
	return NULL;
}

/* Executor @x goes away: its work in flight fails its graphs. */
static void exec_down(int x)
{
	u32 v;

	for (v = 0; v < MINV; v++) {
		if (!M->inv[v].used || M->inv[v].x != x)
			continue;
		if (M->inv[v].g >= 0)
			graph_stop(&M->g[M->inv[v].g], PTASK_GRAPH_FAILED);
		inv_free(v);
	}
	M->exec[x] = false;
}

/* ------------------------------------------------------------------ */
/* Building graphs.                                                    */

static const char *gname(int name)
{
	static const char *const names[NAMES] = {
		"m0", "m1", "m2", "m3", "m4", "m5" };

	return names[name];
}

static u32 live_graphs(void)
{
	u32 i, n = 0;

	for (i = 0; i < M->ng; i++)
		n += M->g[i].live;
	return n;
}

static bool add_chan(struct m_graph *g, int s, int sp, int sport, int dp,
		     int dport)
{
	struct m_chan *ch = &g->ch[g->nch];
	u32 src = sp >= 0 ? g->p[sp].port[sport].handle : 0;
	u32 dst = dp >= 0 ? g->p[dp].port[dport].handle : 0;

	memset(ch, 0, sizeof(*ch));
	ch->sp = sp;
	ch->sport = sport;
	ch->dp = dp;
	ch->dport = dport;
	ch->cap = chance(70) ? 1 + rnd(2) : 1 + rnd(MCAP);
	EXPECT(h_chan(M->c[s], g->handle, src, dst, ch->cap, 0, &ch->handle),
	       0, "channel open");
	if (dp >= 0)
		g->p[dp].port[dport].in = (int)g->nch;
	g->nch++;
	return true;
}

/* A random graph named @name built by user @s. */
static bool op_build(void)
{
	int s = (int)rnd(NU), name = (int)rnd(NAMES);
	struct m_graph *g;
	u32 i, j, k, handle;
	int err;

	if (live_graphs() >= 4)
		return true;
	/* The slot of a freed graph is reused once all are taken. */
	for (i = 0; M->ng == MG && i < MG && M->g[i].live; i++)
		;
	if (M->ng == MG && i == MG)
		return true;
	err = h_graph(M->c[s], gname(name),
		      PTASK_GRAPH_CREATE | PTASK_GRAPH_EXCL, 0666, &handle);
	EXPECT(err, find_name(name) ? -EEXIST : 0, "graph create excl");
	if (err)
		return true;
	g = M->ng == MG ? &M->g[i] : &M->g[M->ng++];
	M->n_built++;
	memset(g, 0, sizeof(*g));
	g->live = true;
	g->handle = handle;
	g->name = name;
	g->state = PTASK_GRAPH_BUILDING;
	g->opened[s] = true;
	g->np = 1 + rnd(MP);
	for (i = 0; i < g->np; i++) {
		struct m_ptask *p = &g->p[i];

		p->nports = 1 + rnd(MPORTS - 1) + chance(20);
		p->state = PTASK_STATE_WAITING;
		p->inv = -1;
		EXPECT(h_ptask(M->c[s], g->handle, p->nports, &p->handle), 0,
		       "ptask open");
		for (j = 0; j < p->nports; j++) {
			u32 r = j == 0 && chance(80) ? 0 : rnd(100);

			p->port[j].kind = r < 35 ? PTASK_PORT_INPUT :
					  r < 50 ? PTASK_PORT_STICKY :
						   PTASK_PORT_OUTPUT;
			p->port[j].occ = -1;
			p->port[j].in = -1;
			EXPECT(h_port(M->c[s], p->handle, p->port[j].kind, 0,
				      &p->port[j].handle), 0, "port open");
		}
	}
	/*
	 * Feed 95% of the inputs: the first input of ptask i mostly from an
	 * output of ptask i - 1 (chains), the others from the client or
	 * from any output (fan-out, cycles).
	 */
	for (i = 0; i < g->np; i++) {
		for (j = 0; j < g->p[i].nports; j++) {
			int sp = -1, sport = -1, tries, q, r;

			if (g->p[i].port[j].kind == PTASK_PORT_OUTPUT ||
			    chance(5) || g->nch == MCH)
				continue;
			for (r = 0; i && j == 0 && chance(70) &&
			     r < (int)g->p[i - 1].nports; r++) {
				if (g->p[i - 1].port[r].kind ==
				    PTASK_PORT_OUTPUT) {
					sp = (int)i - 1;
					sport = r;
					break;
				}
			}
			for (tries = 0; sp < 0 && chance(40) && tries < 8;
			     tries++) {
				q = (int)rnd(g->np);
				r = (int)rnd(g->p[q].nports);
				if (g->p[q].port[r].kind == PTASK_PORT_OUTPUT) {
					sp = q;
					sport = r;
				}
			}
			if (!add_chan(g, s, sp, sport, (int)i, (int)j))
				return false;
		}
	}
	/* Graph outputs: 0, 1 or 2 more channels per output port. */
	for (i = 0; i < g->np; i++) {
		for (j = 0; j < g->p[i].nports; j++) {
			u32 n = rnd(10) < 3 ? 0 : rnd(10) < 7 ? 1 : 2;

			if (g->p[i].port[j].kind != PTASK_PORT_OUTPUT)
				continue;
			for (k = 0; k < n && g->nch < MCH; k++)
				if (!add_chan(g, s, (int)i, (int)j, -1, -1))
					return false;
		}
	}
	/* Other users open it by name. */
	for (i = 0; i < NU; i++) {
		if ((int)i == s || chance(40))
			continue;
		EXPECT(h_graph(M->c[i], gname(name), 0, 0, &handle), 0,
		       "graph open by name");
		MASSERT(handle == g->handle, "open by name: other handle");
		g->opened[i] = true;
	}
	if (chance(80)) {
		EXPECT(h_run(M->c[s], g->handle), 0, "run after build");
		g->state = PTASK_GRAPH_RUNNING;
		M->stamp++;
		settle();
	}
	return true;
}

/* ------------------------------------------------------------------ */
/* Comparing the whole state.                                          */

static u32 live_dbs[MDB];
static u32 n_live_dbs;

static int new_db(int s, u32 handle)
{
	int d;

	if (M->ndb == MDB) {
		m_fail("model: out of datablocks");
		return 0;
	}
	d = (int)M->ndb++;
	M->db[d].handle = handle;
	M->db[d].refs = 1;
	hold_add(s, d);
	live_dbs[n_live_dbs++] = (u32)d;
	return d;
}

static struct m_ptask *find_ptask(u32 handle, struct m_graph **gp)
{
	u32 i, j;

	for (i = 0; i < M->ng; i++) {
		if (!M->g[i].live)
			continue;
		for (j = 0; j < M->g[i].np; j++) {
			if (M->g[i].p[j].handle == handle) {
				if (gp)
					*gp = &M->g[i];
				return &M->g[i].p[j];
			}
		}
	}
	return NULL;
}

static u32 occ_handle(int d)
{
	return d >= 0 ? M->db[d].handle : 0;
}

static bool check_graph(const struct m_graph *g, u64 *cnt)
{
	struct ptask_graph *cg = h_graph_obj(g->handle);
	u32 i, j;

	if (!g->live) {
		MASSERT(!cg, "graph %u should be freed", g->handle);
		return true;
	}
	MASSERT(cg, "graph %u missing", g->handle);
	MASSERT(cg->state == g->state, "graph %u state %u, want %u",
		g->handle, cg->state, g->state);
	cnt[PTASK_COUNT_GRAPHS]++;
	cnt[PTASK_COUNT_PTASKS] += g->np;
	cnt[PTASK_COUNT_CHANNELS] += g->nch;
	for (i = 0; i < g->np; i++) {
		const struct m_ptask *p = &g->p[i];
		struct ptask_ptask *cp = h_ptask_obj(p->handle);

		MASSERT(cp, "ptask %u missing", p->handle);
		MASSERT(cp->state == p->state, "ptask %u (graph %u) state %u,"
			" want %u", p->handle, g->handle, cp->state, p->state);
		MASSERT(!cp->running == (p->inv < 0), "ptask %u running",
			p->handle);
		cnt[PTASK_COUNT_PORTS] += p->nports;
		for (j = 0; j < p->nports; j++) {
			struct ptask_port *cpt = h_port_obj(p->port[j].handle);
			u32 have = cpt && cpt->occupant ?
				   cpt->occupant->obj.handle : 0;

			MASSERT(cpt, "port missing");
			MASSERT(have == occ_handle(p->port[j].occ),
				"ptask %u port %u occupant %u, want %u",
				p->handle, j, have,
				occ_handle(p->port[j].occ));
		}
	}
	for (i = 0; i < g->nch; i++) {
		const struct m_chan *ch = &g->ch[i];
		struct ptask_channel *cc = h_chan_obj(ch->handle);

		MASSERT(cc, "channel missing");
		MASSERT(cc->count == ch->count, "channel %u holds %u, want %u",
			ch->handle, cc->count, ch->count);
		for (j = 0; j < ch->count; j++) {
			u32 have = cc->slots[(cc->head + j) % cc->capacity]->
				   obj.handle;
			u32 want = occ_handle(ch->q[(ch->head + j) % ch->cap]);

			MASSERT(have == want, "channel %u slot %u: %u, want %u",
				ch->handle, j, have, want);
		}
	}
	return true;
}

static bool check_state(void)
{
	u64 cnt[__PTASK_COUNT_MAX] = { 0 };
	struct ptask_list *pos;
	u64 last = 0, cursor = 0;
	u32 i, j, queued = 0, nexec = 0, nh, nobj = 0, prev = 0;
	struct ptask_obj *o;

	for (i = 0; i < M->ng; i++) {
		if (!check_graph(&M->g[i], cnt))
			return false;
		for (j = 0; M->g[i].live && j < M->g[i].np; j++)
			queued += M->g[i].p[j].state == PTASK_STATE_QUEUED;
	}
	/* Datablocks: the live ones and their counts; the dead are gone. */
	for (i = 0; i < n_live_dbs; ) {
		u32 d = live_dbs[i];
		struct ptask_datablock *cd = h_db_obj(M->db[d].handle);

		if (!M->db[d].refs) {
			MASSERT(!cd, "datablock %u should be freed",
				M->db[d].handle);
			live_dbs[i] = live_dbs[--n_live_dbs];
			continue;
		}
		MASSERT(cd, "datablock %u (tag %u) missing", M->db[d].handle,
			d);
		MASSERT(cd->refs == M->db[d].refs,
			"datablock %u refs %u, want %u", M->db[d].handle,
			cd->refs, M->db[d].refs);
		/* Its list of holds: one per client that holds it. */
		nh = 0;
		ptask_list_for_each(pos, &cd->holds)
			nh++;
		for (j = 0; j < NS; j++)
			nh -= M->holds[j][d] > 0;
		MASSERT(nh == 0, "datablock %u: hold list off by %u",
			M->db[d].handle, nh);
		cnt[PTASK_COUNT_DATABLOCKS]++;
		i++;
	}
	for (i = 0; i < MINV; i++)
		cnt[PTASK_COUNT_INVOCATIONS] += M->inv[i].used;
	cnt[PTASK_COUNT_CLIENTS] = NS;
	for (i = 0; i < PTASK_COUNT_BUFFERS; i++)
		MASSERT(h_ns.counts[i] == cnt[i], "count %u: %llu, want %llu",
			i, (unsigned long long)h_ns.counts[i],
			(unsigned long long)cnt[i]);
	MASSERT(os_user_buffers == (long)cnt[PTASK_COUNT_DATABLOCKS],
		"buffers %ld", os_user_buffers);
	/* The ready list: the Queued ptasks, in stamp order. */
	i = 0;
	ptask_list_for_each(pos, &h_ns.ready) {
		struct ptask_ptask *cp = ptask_list_entry(pos,
				struct ptask_ptask, ready_node);
		struct m_ptask *p = find_ptask(cp->obj.handle, NULL);

		MASSERT(p && p->state == PTASK_STATE_QUEUED,
			"ready ptask %u not queued", cp->obj.handle);
		MASSERT(p->stamp >= last, "ready list out of order at %u", i);
		last = p->stamp;
		i++;
	}
	MASSERT(i == queued, "ready list has %u, want %u", i, queued);
	/* Clients: holds and executor roles. */
	for (i = 0; i < NS; i++) {
		u32 n = 0;

		ptask_list_for_each(pos, &M->c[i]->holds)
			n++;
		MASSERT(n == M->nheld[i], "client %u holds %u datablocks, "
			"want %u", i, n, M->nheld[i]);
		for (j = 0; j < M->nheld[i]; j++) {
			int d = M->held[i][j];
			struct ptask_hold *hd = ptask_client_find_hold(M->c[i],
						h_db_obj(M->db[d].handle));

			MASSERT(hd && hd->count == M->holds[i][d],
				"client %u hold on %u", i, M->db[d].handle);
		}
		MASSERT(M->c[i]->executor == M->exec[i], "client %u role", i);
		nexec += M->exec[i];
	}
	MASSERT(h_ns.executors == nexec, "executors %u", h_ns.executors);
	/* A listing walks every object once, in handle order. */
	while ((o = ptask_core_ns_next(&h_ns, &cursor))) {
		MASSERT(!nobj || o->handle > prev, "listing out of order");
		prev = o->handle;
		nobj++;
	}
	MASSERT(nobj == h_ns.hcount, "listing: %u objects of %u", nobj,
		h_ns.hcount);
	return true;
}

/* The access check every call naming an object of @g makes for user @s. */
static int access_err(const struct m_graph *g, int s)
{
	if (!g->live)
		return -ENOENT;
	if (s >= NU || !g->opened[s])
		return -EACCES;
	if (g->state == PTASK_GRAPH_TERMINATED)
		return -ESHUTDOWN;
	if (g->state == PTASK_GRAPH_FAILED)
		return -EIO;
	return 0;
}

static struct m_graph *pick_graph(void)
{
	struct m_graph *cand[MG];
	u32 i, n = 0, nrun = 0;

	if (!M->ng)
		return NULL;
	/* Mostly a running graph, else a live one; now and then any. */
	for (i = 0; i < M->ng; i++)
		if (M->g[i].live && M->g[i].state == PTASK_GRAPH_RUNNING)
			cand[nrun++] = &M->g[i];
	if (nrun && chance(75))
		return cand[rnd(nrun)];
	for (i = 0; i < M->ng; i++)
		if (M->g[i].live)
			cand[n++] = &M->g[i];
	if (n && chance(85))
		return cand[rnd(n)];
	return &M->g[rnd(M->ng)];
}

/* Mostly a user who has @g open. */
static int pick_user(const struct m_graph *g)
{
	int cand[NU], i, n = 0;

	for (i = 0; i < NU; i++)
		if (g->live && g->opened[i])
			cand[n++] = i;
	if (n && chance(90))
		return cand[rnd((u32)n)];
	return (int)rnd(NU);
}

/* ------------------------------------------------------------------ */
/* Client operations.                                                  */

/* A fresh datablock held by @s, tagged with its index; -1 if full. */
static int create_db(int s)
{
	u32 handle;
	int d;

	if (M->nheld[s] >= MHELD - 1)
		return -1;
	if (h_db(M->c[s], 16, &handle) ||
	    !CHECK(M->ndb < MDB)) {
		m_fail("datablock create failed");
		return -1;
	}
	d = new_db(s, handle);
	if (h_write_tag(M->c[s], handle, TAG0 + (u64)d)) {
		m_fail("write tag failed");
		return -1;
	}
	M->n_ok++;
	return d;
}

static bool op_create(void)
{
	create_db((int)rnd(NU));
	return !M->failed;
}

static bool op_release(void)
{
	int s = chance(90) ? (int)rnd(NU) : NU + (int)rnd(NX), d;

	if (M->nheld[s] && chance(90)) {
		d = M->held[s][rnd(M->nheld[s])];
		EXPECT(h_release(M->c[s], M->db[d].handle), 0, "release");
		hold_drop(s, d);
		return true;
	}
	if (!M->ndb)
		return true;
	d = (int)rnd(M->ndb);
	if (M->holds[s][d])
		return true;
	EXPECT(h_release(M->c[s], M->db[d].handle), -ENOENT,
	       "release of a datablock not held");
	return true;
}

/* A random channel of @g: @pct% of the time one with @want_end free. */
static struct m_chan *pick_chan(struct m_graph *g, bool input, u32 pct)
{
	u32 i, n = 0;
	int cand[MCH];

	if (!g->nch)
		return NULL;
	for (i = 0; i < g->nch; i++)
		if (input ? g->ch[i].sp < 0 : g->ch[i].dp < 0)
			cand[n++] = (int)i;
	if (n && chance(pct))
		return &g->ch[cand[rnd(n)]];
	return &g->ch[rnd(g->nch)];
}

static bool op_push(void)
{
	struct m_graph *g = pick_graph();
	int s, d, want;
	struct m_chan *ch;
	bool fresh = false;

	if (!g || !(ch = pick_chan(g, true, 90)))
		return true;
	s = pick_user(g);
	if (!M->nheld[s] || chance(30)) {
		d = create_db(s);
		if (d < 0)
			return !M->failed;
		fresh = true;
	} else if (chance(4) && M->ndb) {
		d = (int)rnd(M->ndb);		/* maybe not held */
	} else {
		d = M->held[s][rnd(M->nheld[s])];
	}
	want = access_err(g, s);
	if (!want && ch->sp >= 0)
		want = -EINVAL;
	if (!want && !M->holds[s][d])
		want = -ENOENT;
	if (!want && ch->count == ch->cap)
		want = -EAGAIN;
	EXPECT(h_push(M->c[s], ch->handle, M->db[d].handle), want, "push");
	if (!want) {
		db_get(d);
		chan_push(ch, d);
		M->stamp++;
		settle();
	}
	if (fresh && chance(70)) {
		EXPECT(h_release(M->c[s], M->db[d].handle), 0, "release");
		hold_drop(s, d);
	}
	return true;
}

static bool op_pull(void)
{
	struct m_graph *g = pick_graph();
	int s, d = -1, want;
	struct m_chan *ch;
	struct ptask_pull out;
	u64 tag;

	if (!g || !(ch = pick_chan(g, false, 90)))
		return true;
	s = pick_user(g);
	if (M->nheld[s] >= MHELD - 1)
		return true;
	want = access_err(g, s);
	if (!want && ch->dp >= 0)
		want = -EINVAL;
	if (!want && !ch->count)
		want = -EAGAIN;
	EXPECT(h_pull_full(M->c[s], ch->handle, &out), want, "pull");
	if (want)
		return true;
	d = chan_pop(ch);
	hold_add(s, d);			/* the slot's reference moves */
	MASSERT(out.datablock == M->db[d].handle,
		"pulled datablock %u, want %u (channel %u)", out.datablock,
		M->db[d].handle, ch->handle);
	MASSERT(out.bytes == 16, "pulled bytes");
	MASSERT(out.mmap_offset == (u64)out.datablock << PTASK_MMAP_SHIFT,
		"mmap offset");
	MASSERT(!h_read_tag(M->c[s], out.datablock, &tag) &&
		tag == TAG0 + (u64)d, "pulled tag");
	M->n_pulled++;
	M->stamp++;
	settle();
	return true;
}

/* ------------------------------------------------------------------ */
/* Executor operations.                                                */

static u64 min_queued_stamp(void)
{
	u64 min = ~0ULL;
	u32 i, j;

	for (i = 0; i < M->ng; i++)
		for (j = 0; M->g[i].live && j < M->g[i].np; j++)
			if (M->g[i].p[j].state == PTASK_STATE_QUEUED &&
			    M->g[i].p[j].stamp < min)
				min = M->g[i].p[j].stamp;
	return min;
}

/* Is there a ptask of the oldest queued stamp needing > @room ports? */
static bool head_may_not_fit(u32 room)
{
	u64 min = min_queued_stamp();
	u32 i, j;

	for (i = 0; i < M->ng; i++)
		for (j = 0; M->g[i].live && j < M->g[i].np; j++)
			if (M->g[i].p[j].state == PTASK_STATE_QUEUED &&
			    M->g[i].p[j].stamp == min &&
			    M->g[i].p[j].nports > room)
				return true;
	return false;
}

/* Queued -> Executing in the model, checked against the core's records. */
static bool model_start(int x, const struct ptask_invocation *ci,
			const struct ptask_invocation_port *pr, u32 first)
{
	struct m_graph *g = NULL;
	struct m_ptask *p = find_ptask(ci->ptask, &g);
	u32 j, v;
	u64 tag;

	MASSERT(p, "took unknown ptask %u", ci->ptask);
	MASSERT(p->state == PTASK_STATE_QUEUED, "took ptask %u in state %u",
		ci->ptask, p->state);
	MASSERT(p->stamp == min_queued_stamp(),
		"took ptask %u out of FIFO order", ci->ptask);
	MASSERT(ci->graph == g->handle && ci->n_ports == p->nports &&
		ci->first_port == first && ci->kind == PTASK_KIND_CPU,
		"invocation record of ptask %u", ci->ptask);
	for (v = 0; v < MINV && M->inv[v].used; v++)
		;
	MASSERT(v < MINV, "model: too many invocations");
	memset(&M->inv[v], 0, sizeof(M->inv[v]));
	M->inv[v].used = true;
	M->inv[v].id = ci->id;
	M->inv[v].x = x;
	M->inv[v].g = (int)(g - M->g);
	M->inv[v].p = (int)(p - g->p);
	M->inv[v].nports = p->nports;
	for (j = 0; j < p->nports; j++) {
		struct m_port *pt = &p->port[j];

		M->inv[v].in[j] = -1;
		MASSERT(pr[j].port == pt->handle && pr[j].index == j &&
			pr[j].kind == pt->kind, "port record %u of ptask %u",
			j, p->handle);
		MASSERT(pr[j].datablock == occ_handle(pt->occ),
			"ptask %u port %u: input %u, want %u", p->handle, j,
			pr[j].datablock, occ_handle(pt->occ));
		if (pt->kind == PTASK_PORT_OUTPUT)
			continue;
		/* The executor maps what it took: the tag travelled. */
		MASSERT(!h_read_tag(M->c[x], pr[j].datablock, &tag) &&
			tag == TAG0 + (u64)pt->occ, "input tag");
		M->inv[v].in[j] = pt->occ;
		if (pt->kind == PTASK_PORT_STICKY)
			db_get(pt->occ);
		else
			pt->occ = -1;
	}
	p->state = PTASK_STATE_EXECUTING;
	p->inv = (int)v;
	M->stamp++;
	settle();
	return true;
}

static bool op_take(void)
{
	int x = NU + (int)rnd(NX);
	u32 max_inv = 1 + rnd(4), max_ports = 1 + rnd(12), i, used = 0;
	struct h_take *t = &M->take;
	int err, want = 0;

	if (!M->exec[x])
		want = -EPERM;
	else if (min_queued_stamp() == ~0ULL)
		want = -EAGAIN;
	err = h_take(M->c[x], max_inv, max_ports, t);
	if (err == -ENOSPC && !want) {
		MASSERT(head_may_not_fit(max_ports), "take: -ENOSPC");
		m_count_err(err);
		return true;
	}
	EXPECT(err, want, "take");
	if (err)
		return true;
	MASSERT(t->n_inv >= 1 && t->n_inv <= max_inv, "take: %u", t->n_inv);
	for (i = 0; i < t->n_inv; i++) {
		if (!model_start(x, &t->inv[i], &t->ports[used], used))
			return false;
		used += t->inv[i].n_ports;
		M->n_taken++;
	}
	MASSERT(used == t->n_ports && used <= max_ports, "take: ports");
	if (t->n_inv < max_inv && min_queued_stamp() != ~0ULL)
		MASSERT(head_may_not_fit(max_ports - used),
			"take stopped early with work that fits");
	return true;
}

/* Outputs handed over: the executor's hold on each distinct one goes. */
static void model_hand_over(int x, const int *ds, u32 n)
{
	u32 i, j;

	for (i = 0; i < n; i++) {
		bool seen = false;

		for (j = 0; j < i; j++)
			seen |= ds[j] == ds[i];
		if (!seen && ds[i] >= 0 && M->holds[x][ds[i]])
			hold_drop(x, ds[i]);
	}
}

static int pick_inv(int x)
{
	int cand[MINV];
	u32 v, n = 0;

	for (v = 0; v < MINV; v++)
		if (M->inv[v].used && M->inv[v].x == x)
			cand[n++] = (int)v;
	return n ? cand[rnd(n)] : -1;
}

static bool call_complete(int x, u64 id, s32 status,
			  const struct ptask_exec_output *o, u32 n, int want,
			  const char *what)
{
	EXPECT(h_complete(M->c[x], id, status, o, n), want, what);
	return true;
}

static bool op_complete(void)
{
	int x = NU + (int)rnd(NX), v, ds[MPORTS + 2], d;
	struct ptask_exec_output o[MPORTS + 2];
	struct m_inv *inv;
	struct m_ptask *p;
	u32 n = 0, j, nin = 0;
	int ins[MPORTS];

	if (!M->exec[x])
		return call_complete(x, 1, 0, NULL, 0, -EPERM, "complete: "
				     "not an executor");
	if (M->nheld[x] > MHELD / 2) {	/* leftovers of refused calls */
		d = M->held[x][rnd(M->nheld[x])];
		EXPECT(h_release(M->c[x], M->db[d].handle), 0, "release");
		hold_drop(x, d);
	}
	v = pick_inv(x);
	if (v < 0 && chance(80))
		return op_take();
	if (v < 0 || chance(3)) {
		u64 id = v < 0 ? 0x7fff0000ULL + rnd(100) : M->inv[v].id + 1000;

		return call_complete(x, id, 0, NULL, 0, -ENOENT,
				     "complete: unknown id");
	}
	inv = &M->inv[v];
	if (chance(3))	/* the other executor did not take it */
		return call_complete(NU + (x - NU + 1) % NX, inv->id, 0, NULL,
				     0, M->exec[NU + (x - NU + 1) % NX] ?
				     -ENOENT : -EPERM, "complete: other");
	if (inv->g < 0) {
		/* Orphaned: -ECANCELED, and what it hands over is freed. */
		for (j = 0; j < rnd(3); j++) {
			ds[n] = create_db(x);
			if (ds[n] < 0)
				break;
			o[n].index = j;
			o[n].datablock = M->db[ds[n]].handle;
			n++;
		}
		EXPECT(h_complete(M->c[x], inv->id, 0, o, n), -ECANCELED,
		       "complete of an orphan");
		model_hand_over(x, ds, n);
		inv_free(v);
		return true;
	}
	p = &M->g[inv->g].p[inv->p];
	for (j = 0; j < inv->nports; j++)
		if (inv->in[j] >= 0)
			ins[nin++] = inv->in[j];
	/* One datablock per output: a fresh copy, or an input passed on. */
	for (j = 0; j < p->nports; j++) {
		if (p->port[j].kind != PTASK_PORT_OUTPUT)
			continue;
		if (nin && (chance(30) || M->nheld[x] >= MHELD - 2))
			ds[n] = ins[rnd(nin)];
		else
			ds[n] = create_db(x);
		if (ds[n] < 0)
			return !M->failed;
		o[n].index = j;
		o[n].datablock = M->db[ds[n]].handle;
		n++;
	}
	if (chance(1)) {
		/* A failing status fails the graph; outputs only released. */
		EXPECT(h_complete(M->c[x], inv->id, -EIO, o, n), 0,
		       "complete with an error status");
		model_hand_over(x, ds, n);
		graph_stop(&M->g[inv->g], PTASK_GRAPH_FAILED);
		inv_free(v);
		return true;
	}
	if (chance(15)) {
		/* A refused call first: nothing may change. */
		struct ptask_exec_output bad[MPORTS + 2];
		u32 nb = n, r = rnd(4);
		int want = -EINVAL;

		memcpy(bad, o, sizeof(o));
		if (r == 0 && n) {
			nb = n - 1;			/* missing */
		} else if (r == 1 && n) {
			bad[nb++] = o[0];		/* duplicate */
		} else if (r == 2 && n) {
			bad[0].datablock = 0x7ffffff0;	/* unknown */
			want = -ENOENT;
		} else {
			bad[nb].index = p->nports + rnd(60);
			bad[nb++].datablock = n ? o[0].datablock : 1;
		}
		EXPECT(h_complete(M->c[x], inv->id, 0, bad, nb), want,
		       "refused complete");
		if (!check_state())
			return false;
		if (chance(50))
			return true;	/* completed some later op */
	}
	EXPECT(h_complete(M->c[x], inv->id, 0, o, n), 0, "complete");
	for (j = 0; j < n; j++) {
		db_get(ds[j]);
		p->port[o[j].index].occ = ds[j];
	}
	model_hand_over(x, ds, n);
	inv_free(v);
	p->inv = -1;
	p->state = PTASK_STATE_COMPLETED;
	M->stamp++;
	settle();
	return true;
}

/* ------------------------------------------------------------------ */
/* Graph and client life.                                              */

static bool op_run(void)
{
	struct m_graph *g = pick_graph();
	int s, want;

	if (!g)
		return true;
	s = pick_user(g);
	want = access_err(g, s);
	if (!want && g->state == PTASK_GRAPH_RUNNING)
		want = -EALREADY;
	EXPECT(h_run(M->c[s], g->handle), want, "run");
	if (!want) {
		g->state = PTASK_GRAPH_RUNNING;
		M->stamp++;
		settle();
	}
	return true;
}

static bool op_terminate(void)
{
	struct m_graph *g = pick_graph();
	int s, want;

	if (!g || chance(50))
		return true;
	s = pick_user(g);
	want = access_err(g, s);
	EXPECT(h_terminate(M->c[s], g->handle), want, "terminate");
	if (!want)
		graph_stop(g, PTASK_GRAPH_TERMINATED);
	return true;
}

static bool op_close(void)
{
	int s = (int)rnd(NU), want, gs[MG * NU], ss[MG * NU];
	struct m_graph *g = NULL;
	u32 i, j, n = 0, nstop = 0;

	/* Mostly a stopped graph, by a user who has it open. */
	for (i = 0; i < M->ng; i++) {
		for (j = 0; M->g[i].live && j < NU; j++) {
			if (!M->g[i].opened[j])
				continue;
			if (stopped(&M->g[i])) {
				memmove(gs + 1, gs, n * sizeof(*gs));
				memmove(ss + 1, ss, n * sizeof(*ss));
				gs[0] = (int)i;
				ss[0] = (int)j;
				nstop++;
			} else {
				gs[n] = (int)i;
				ss[n] = (int)j;
			}
			n++;
		}
	}
	if (nstop && chance(80)) {
		i = rnd(nstop);
		g = &M->g[gs[i]];
		s = ss[i];
	} else if (n && chance(60)) {
		i = rnd(n);
		g = &M->g[gs[i]];
		s = ss[i];
	} else {
		g = pick_graph();
	}
	if (!g)
		return true;
	want = g->live && g->opened[s] ? 0 : -ENOENT;
	EXPECT(h_close(M->c[s], g->handle), want, "graph close");
	if (!want)
		graph_close(g, s);
	return true;
}

static bool open_by_name(int s, int name)
{
	struct m_graph *g = find_name(name);
	u32 handle;

	EXPECT(h_graph(M->c[s], gname(name), 0, 0, &handle),
	       g ? 0 : -ENOENT, "graph open by name");
	if (g) {
		MASSERT(handle == g->handle, "opened another graph");
		g->opened[s] = true;
	}
	return true;
}

static bool op_open(void)
{
	return open_by_name((int)rnd(NU), (int)rnd(NAMES));
}

/* A client's fd closes: a new client takes its place. */
static bool op_destroy(void)
{
	int s = (int)rnd(NS), name;
	u32 i;

	ptask_core_client_destroy(M->c[s]);
	M->c[s] = h_client();
	if (s >= NU) {
		if (M->exec[s])
			exec_down(s);
	} else {
		for (i = 0; i < M->ng; i++)
			if (M->g[i].live && M->g[i].opened[s])
				graph_close(&M->g[i], s);
	}
	while (M->nheld[s]) {
		int d = M->held[s][0];

		while (M->holds[s][d] > 1)
			hold_drop(s, d);
		hold_drop(s, d);
	}
	if (!check_state())
		return false;
	if (s >= NU) {
		EXPECT(ptask_core_exec_register(M->c[s], 1), 0, "register");
		M->exec[s] = true;
		return true;
	}
	for (name = 0; name < NAMES; name++)
		if (chance(50) && !open_by_name(s, name))
			return false;
	return true;
}

static bool op_exec_role(void)
{
	int x = NU + (int)rnd(NX);

	if (M->exec[x] && !M->exec[NU + (x - NU + 1) % NX])
		x = NU + (x - NU + 1) % NX;	/* register the other first */

	if (M->exec[x]) {
		if (chance(70))
			return true;
		EXPECT(ptask_core_exec_unregister(M->c[x]), 0, "unregister");
		exec_down(x);
	} else {
		EXPECT(ptask_core_exec_register(M->c[x], 1), 0, "register");
		M->exec[x] = true;
	}
	return true;
}

/* ------------------------------------------------------------------ */
/* The run.                                                            */

struct m_op {
	const char *name;
	bool (*fn)(void);
	u32 weight;
};

static const struct m_op m_ops[] = {
	{ "build", op_build, 3 },	{ "push", op_push, 30 },
	{ "pull", op_pull, 20 },	{ "create", op_create, 3 },
	{ "release", op_release, 8 },	{ "take", op_take, 14 },
	{ "complete", op_complete, 20 }, { "run", op_run, 3 },
	{ "open", op_open, 2 },		{ "close", op_close, 4 },
	{ "terminate", op_terminate, 1 }, { "destroy", op_destroy, 1 },
	{ "exec_role", op_exec_role, 2 },
};

static const struct m_op *pick_op(void)
{
	u32 total = 0, r, i;

	/* With no running graph, building is most of what makes sense. */
	for (i = 0; i < M->ng; i++)
		if (findable(&M->g[i]))
			break;
	if (i == M->ng && chance(50))
		return &m_ops[0];
	for (i = 0; i < ARRAY_SIZE(m_ops); i++)
		total += m_ops[i].weight;
	r = rnd(total);
	for (i = 0; r >= m_ops[i].weight; i++)
		r -= m_ops[i].weight;
	return &m_ops[i];
}

/* -v: the live graphs at the end of a run. */
static void dump(void)
{
	static const char kinds[] = "IOS";
	u32 i, j, k;

	for (i = 0; i < M->ng; i++) {
		struct m_graph *g = &M->g[i];

		if (!g->live)
			continue;
		h_diag("graph %u: state %u, opened by %d%d%d", g->handle,
		       g->state, g->opened[0], g->opened[1], g->opened[2]);
		for (j = 0; j < g->np; j++) {
			struct m_ptask *p = &g->p[j];
			char line[256];
			int n = 0;

			for (k = 0; k < p->nports; k++)
				n += snprintf(line + n, sizeof(line) - n,
					      " %c(occ %d, in %d)",
					      kinds[p->port[k].kind],
					      p->port[k].occ, p->port[k].in);
			h_diag("  ptask %u: state %u:%s", j, p->state, line);
		}
		for (j = 0; j < g->nch; j++)
			h_diag("  channel %u: %d.%d -> %d.%d, %u of %u", j,
			       g->ch[j].sp, g->ch[j].sport, g->ch[j].dp,
			       g->ch[j].dport, g->ch[j].count, g->ch[j].cap);
	}
}

static void run_seed(u64 seed)
{
	u32 i;

	M = calloc(1, sizeof(*M));
	if (!M)
		abort();
	n_live_dbs = 0;
	M->seed = seed;
	/*
	 * The model is of the object model and FIFO takes; GPU budgets
	 * (which hold ptasks back by GPU time) have budget_core_test.c.
	 */
	{
		struct ptask_sched_params off = { .budgets = 0 };

		CHECK_OK(ptask_core_sched_set(&h_ns, PTASK_SCHED_SET_BUDGETS, &off));
	}
	M->rng = seed * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL;
	if (!M->rng)
		M->rng = 1;
	for (i = 0; i < NS; i++) {
		M->c[i] = h_client();
		if (i >= NU) {
			CHECK_OK(ptask_core_exec_register(M->c[i], 1));
			M->exec[i] = true;
		}
	}
	/* Stops early (no failure) when the datablock table runs out. */
	for (M->op = 0; M->op < opt_ops && !M->failed &&
	     M->ndb < MDB - 4 * MPORTS; M->op++) {
		const struct m_op *op = pick_op();

		if (!op->fn() || M->failed) {
			m_fail("in op %s", op->name);
			break;
		}
		if (!check_state()) {
			m_fail("after op %s", op->name);
			break;
		}
	}
	h_diag("seed %llu: %u ops, %u graphs, %u datablocks, %llu ok, "
	       "%llu errors, %llu invocations, %llu pulls%s",
	       (unsigned long long)seed, M->op, M->n_built, M->ndb,
	       (unsigned long long)M->n_ok, (unsigned long long)M->n_err,
	       (unsigned long long)M->n_taken,
	       (unsigned long long)M->n_pulled,
	       M->failed ? " (FAILED: rerun with --seed=N)" : "");
	if (opt_verbose) {
		dump();
		for (i = 1; i < 256; i++)
			if (M->errs[i])
				h_diag("  %s: %u", h_errname(-(int)i),
				       M->errs[i]);
	}
	/* Teardown: h_main destroys the clients and checks for leaks. */
	free(M);
	M = NULL;
}

static const u64 fixed_seeds[] = { 1, 2, 3, 42, 0xdeadbeef, 20111023 };
static u64 extra_seed;

#define SEED_TEST(i)							\
static void test_seed_##i(void)						\
{									\
	run_seed(fixed_seeds[i]);					\
}
SEED_TEST(0)
SEED_TEST(1)
SEED_TEST(2)
SEED_TEST(3)
SEED_TEST(4)
SEED_TEST(5)

static void test_seed_extra(void)
{
	run_seed(extra_seed);
}

static const struct h_test tests[] = {
	H_TEST(test_seed_0),
	H_TEST(test_seed_1),
	H_TEST(test_seed_2),
	H_TEST(test_seed_3),
	H_TEST(test_seed_4),
	H_TEST(test_seed_5),
	H_TEST(test_seed_extra),
};

int main(int argc, char **argv)
{
	const char *env = getenv("PTASK_MODEL_SEED");
	char **rest = calloc((size_t)argc + 1, sizeof(*rest));
	int i, n = 0;

	if (!rest)
		return 1;
	extra_seed = (u64)time(NULL) ^ ((u64)clock() << 32);
	if (env && *env)
		extra_seed = strtoull(env, NULL, 0);
	for (i = 0; i < argc; i++) {
		if (i && !strncmp(argv[i], "--seed=", 7))
			extra_seed = strtoull(argv[i] + 7, NULL, 0);
		else if (i && !strcmp(argv[i], "-v"))
			opt_verbose = true;
		else if (i && !strncmp(argv[i], "--ops=", 6))
			opt_ops = strtoul(argv[i] + 6, NULL, 0);
		else
			rest[n++] = argv[i];
	}
	printf("# model_test: extra seed %llu (--seed=N or "
	       "PTASK_MODEL_SEED=N to repeat), %lu ops per seed\n",
	       (unsigned long long)extra_seed, opt_ops);
	i = h_main(tests, ARRAY_SIZE(tests), n, rest);
	free(rest);
	return i;
}

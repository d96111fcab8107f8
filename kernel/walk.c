// SPDX-License-Identifier: GPL-2.0
/*
 * The page walk of the vaddr operations: check and prepare the page sampled
 * at one address of a process.  The kernel's page walker,
 * ptep_test_and_clear_young() and pte_offset_map_lock() are not available
 * to modules (docs/kernel-facts.md, exports), so the walk is written out
 * here.  Rules (docs/kernel-facts.md, walk; each was needed under THP
 * split/collapse churn and shmem collapse):
 *
 *  - The caller pins the mm (mm_users) and holds mmap_read_lock, and we walk
 *    only inside a VMA it found: then no upper-level table (pgd/p4d/pud/pmd
 *    page) can be freed under us, since free_pgtables() runs only for
 *    detached VMAs or on the last mm_users put.  Entries can still change:
 *    none -> table when faults populate them, never table -> something else.
 *    (Shared hugetlb pmd tables are the exception: below.)
 *  - A PTE *table*, however, can be freed under the read lock from 6.5 on:
 *    khugepaged's retract_page_tables() detaches it holding only the pmd and
 *    pte locks, and frees it with pte_free_defer(), i.e. after an RCU grace
 *    period (the table's split ptlock goes with it).  Hence the pmd is read
 *    once, locklessly, inside rcu_read_lock(), and the table and its lock are
 *    reached from that snapshot.  Before 6.5 tables are only freed under the
 *    write lock, and the same code is merely cautious there.
 *  - Reading a bit takes no lock, as in GUP-fast: the pte is read from the
 *    snapshot's table, then the pmd is read again and the walk retried
 *    unless pmd_same(), so a value read from a table retracted meanwhile is
 *    never used.  A racing change of the entry itself (unmap, migration,
 *    the hardware setting the bit) only moves the read to one side of it.
 *  - Clearing a bit takes the page-table lock of the entry, the lock rmap
 *    and THP split take, and only when the lockless read saw the bit set;
 *    under the lock the pmd is re-read and the walk retried unless
 *    pmd_same() (retract takes the same pte lock before clearing the pmd,
 *    so a table still linked while we hold its lock stays linked), and the
 *    bit is cleared with the atomic test-and-clear of
 *    ptep_test_and_clear_young(), because the hardware sets
 *    accessed/dirty bits concurrently.  pte_offset_map_lock() would do the
 *    same but is not usable: 6.12 does not export __pte_offset_map_lock().
 *  - "Huge" (daptrace_walk_pmd_leaf()) is tested before pmd_bad(), because
 *    x86's pmd_bad() is true for a leaf pmd; and nothing is ever cleared on a
 *    bad, none or non-present entry: pmd_clear_bad() is not exported on 6.1
 *    and fixing page tables is not our business.
 *  - hugetlb: a 2 MiB page is a pmd leaf (handled like a THP pmd: x86's
 *    pmd_trans_huge() is true for it, and pmd_lock() is the lock
 *    huge_pte_lockptr() gives for that size), a 1 GiB page a pud leaf
 *    (cleared under pud_lockptr(), the mm's page_table_lock).  But a shared
 *    hugetlb mapping may share its pmd tables with other processes
 *    (huge_pmd_share()), and unsharing (huge_pmd_unshare()) drops one under
 *    the i_mmap and hugetlb VMA locks, which a module cannot take, not the
 *    mmap lock: wherever a pmd table may be shared, the walk stops at the
 *    pud and the sample is unobserved.  Its accessed bits would not be this
 *    process's alone anyway.
 *  - Without CONFIG_TRANSPARENT_HUGEPAGE, pmd_trans_huge() is a stub that
 *    says no, also for a 2 MiB hugetlb page: that one is found as a pmd
 *    leaf of a hugetlb VMA (daptrace_walk_pmd_leaf()), never left to
 *    pmd_bad().
 *  - A pud leaf outside hugetlb (1 GiB DAX) is not walked: its sample is
 *    unobserved, not "not accessed" (DAX pages have no folio we may mark,
 *    and the device's own rules for them are not ours).  PFNMAP and IO
 *    VMAs are not walked: their pages are not memory the kernel manages,
 *    and drivers may map them without accessed bits; their samples are
 *    unobserved.
 *  - Struct pages are reached with pfn_to_online_page() and looked at only
 *    with a reference (or under the entry's lock, which keeps the folio
 *    mapped): memory hot-unplug may offline a section and free its memmap
 *    under a pfn read without locks.
 *
 * Reclaim and the accessed bit.  Reclaim clears accessed bits too: one it
 * clears between our prepare and our check hides an access.  With
 * CONFIG_PAGE_IDLE_FLAG (Debian 6.12, 7.3) we do what DAMON does: prepare
 * marks the folio idle, and folio_referenced() and folio_mark_accessed()
 * clear that flag when they see a reference, so the check also counts a
 * folio that is no longer idle.  MGLRU's aging walk and look-around
 * (walk_pte_range(), lru_gen_look_around(); on by default in 6.12 and 7.3)
 * clear accessed bits without touching the idle flag, but move the folio
 * to the youngest generation (folio_update_gen()); and the classic LRU
 * records a reference it took away by setting PG_referenced or activating
 * the folio.  So prepare also records the folio's generation with its
 * lruvec's newest (max_seq), and those two flags (daptrace_walk_lru()),
 * and the check counts a folio which gained either flag, or whose
 * generation moved where a reference moves it: into the youngest
 * generation of some moment since prepare.  Isolation and putback
 * (migration that fails, compaction, reclaim), and eviction and aging
 * sorting the oldest generation, move a folio too, elsewhere, with one
 * exception: a folio isolated from one of the two youngest generations is
 * put back into the youngest; a folio of those two at prepare that moved
 * into the youngest is therefore unobserved, not accessed
 * (daptrace_walk_lru_seen() gives the rules and their sources).  Nor is a
 * move a reference of this sample when reclaim took the reference prepare
 * handed it (daptrace_walk_folio_referenced()).  What this misses: a
 * folio already in the youngest generation that look-around finds young
 * again; what it counts wrongly: a folio rotated at eviction while under
 * writeback or rejected there, and an anonymous folio put back after an
 * isolation that followed an aging in the same sample (its folio and its
 * young flag unchanged).  Without the idle flag (5.10, 6.1) the LRU record
 * is all there is.  The aging walk flushes no TLB after its clears
 * (daptrace_walk_lru_aged()): pages it found young stay cached with their
 * bit clear, and until something flushes, their accesses set no bit, so
 * the next agings do not find them young and they sink, unseen by both,
 * to the oldest generation, from which inc_min_seq() moves them without
 * a reference (a move the check does not count).  So a check that sees
 * that an aging ran since prepare has its pass flush after its prepares
 * (&daptrace_walk_page.aged), as if the pass had cleared those bits
 * itself.  And prepare hands reclaim the reference it
 * takes away, with folio_set_young(), which folio_referenced() counts (an
 * empty stub without the idle flag); the check does not count what
 * reclaim then does with that old reference.  The idle flag is shared
 * with DAMON and /sys/kernel/mm/page_idle, and each of them clears
 * accessed bits the others have not read yet: run together on the same
 * pages, all of them undercount.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hash.h>
#include <linux/hugetlb_inline.h>
#include <linux/leafops.h>
#include <linux/memcontrol.h>
#include <linux/memory_hotplug.h>
#include <linux/mm.h>
#include <linux/mm_inline.h>
#include <linux/page_idle.h>
#include <linux/pgtable.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>

#include "core.h"
#include "walk.h"

/*
 * Page-table changes under us are retried this often; then the check is
 * unobserved (and a prepare clears nothing: its sample's check finds what
 * it finds, the bit being set since a clear before).
 */
#define DAPTRACE_WALK_MAX_TRIES		4

static inline bool daptrace_walk_has_idle(void)
{
	return IS_ENABLED(CONFIG_PAGE_IDLE_FLAG);
}

/* Is @ptent normal memory whose folio we may look at? */
static inline bool daptrace_walk_pte_normal(pte_t ptent)
{
	return pte_present(ptent) && !pte_special(ptent) && !pte_devmap(ptent);
}

/*
 * The folio mapped at @pfn, with a reference, if @pfn is online memory;
 * NULL otherwise.  Lockless callers must check afterwards that their entry
 * still maps @pfn: only then is the reference one on the folio they found
 * (as in GUP-fast).
 */
static struct folio *daptrace_walk_folio_get(unsigned long pfn)
{
	struct page *page = pfn_to_online_page(pfn);
	struct folio *folio;

	if (!page)
		return NULL;
	folio = page_folio(page);
	if (!folio_try_get(folio))
		return NULL;
	/* Split meanwhile: the page belongs to another folio now. */
	if (unlikely(folio != page_folio(page))) {
		folio_put(folio);
		return NULL;
	}
	return folio;
}

/*
 * What prepare records of the sampled page, in the region's sample state
 * (0: no folio, nothing recorded): the folio it marked idle
 * (DAPTRACE_WALK_RECORDED, and its pfn as the entry maps it: the page of a
 * pte, the head of a pmd or pud leaf), whether it handed reclaim a reference
 * (DAPTRACE_WALK_HANDED_BACK), and what a reference moves in the folio's
 * LRU state: the classic LRU's active and referenced flags, and MGLRU's
 * generation + 1 (0: not on an MGLRU list, or no consistent snapshot: see
 * daptrace_walk_lru_gen()) with the low bits of its lruvec's max_seq and a
 * hash of the lruvec (which changes if the folio's memcg does).  A folio
 * off the LRU (isolated for reclaim or migration, or not LRU memory at
 * all) records no LRU state, and is judged by its accessed bit and idle
 * flag alone.
 */
#define DAPTRACE_WALK_LRU_REFERENCED	0x1UL
#define DAPTRACE_WALK_LRU_ACTIVE	0x2UL
#define DAPTRACE_WALK_LRU_ON		0x4UL
#define DAPTRACE_WALK_LRU_GEN_SHIFT	3
#define DAPTRACE_WALK_LRU_GEN_MASK	0x7UL
#define DAPTRACE_WALK_HANDED_BACK	0x40UL
#define DAPTRACE_WALK_RECORDED		0x80UL
#define DAPTRACE_WALK_LRU_SEQ_SHIFT	8
#define DAPTRACE_WALK_LRU_SEQ_BITS	8
#define DAPTRACE_WALK_LRU_SEQ_MASK	(BIT(DAPTRACE_WALK_LRU_SEQ_BITS) - 1)
#define DAPTRACE_WALK_LRU_TAG_SHIFT	16
#define DAPTRACE_WALK_LRU_TAG_BITS	8
#define DAPTRACE_WALK_LRU_TAG_MASK	(BIT(DAPTRACE_WALK_LRU_TAG_BITS) - 1)
#define DAPTRACE_WALK_PFN_SHIFT		24

/* Every pfn fits above the flags (x86-64: at most 52 physical address bits). */
static_assert(__PHYSICAL_MASK_SHIFT - PAGE_SHIFT + DAPTRACE_WALK_PFN_SHIFT <=
	      BITS_PER_LONG);
static_assert(DAPTRACE_WALK_LRU_TAG_SHIFT + DAPTRACE_WALK_LRU_TAG_BITS <=
	      DAPTRACE_WALK_PFN_SHIFT);
#ifdef CONFIG_LRU_GEN
static_assert(MAX_NR_GENS < DAPTRACE_WALK_LRU_GEN_MASK);
/* The recorded bits of a sequence number still say its generation. */
static_assert(BIT(DAPTRACE_WALK_LRU_SEQ_BITS) % MAX_NR_GENS == 0);
#endif

/*
 * MGLRU's generation of @folio (@gen) and the newest sequence number of the
 * lruvec it is on (@max_seq), with a hash of that lruvec (@tag), as one
 * snapshot: the generation read between two reads of the same max_seq and
 * of the same lruvec, else none (false).  A generation is a sequence number
 * modulo MAX_NR_GENS, and while max_seq stays what it was the folio's lies
 * in the window of at most MAX_NR_GENS below it: inc_max_seq() moves the
 * oldest generation's folios (inc_min_seq()) before it publishes the new
 * max_seq with a release, which the acquire in daptrace_lru_gen_max_seq()
 * pairs with.  The lruvec and the folio stay allocated while we look: see
 * daptrace_folio_lruvec() for the lruvec (RCU), and our callers hold a
 * reference on the folio or the lock of an entry mapping it, so it is not
 * freed, and stays charged to a memcg (uncharged when freed) unless
 * migration moves its charge to the copy: then its memcg reads NULL and
 * nothing is recorded.  These are lockless reads of state the LRU lock
 * guards: what they cost when they race is said at
 * daptrace_walk_lru_seen().
 */
static bool daptrace_walk_lru_gen(struct folio *folio, int *gen,
				  unsigned long *max_seq, unsigned long *tag)
{
	struct lruvec *lruvec;
	bool ok = false;

	rcu_read_lock();
	lruvec = daptrace_folio_lruvec(folio);
	if (lruvec) {
		*max_seq = daptrace_lru_gen_max_seq(lruvec);
		*gen = folio_lru_gen(folio);
		/* The generation before the re-reads. */
		smp_rmb();
		ok = *gen >= 0 && daptrace_lru_gen_max_seq(lruvec) == *max_seq &&
		     daptrace_folio_lruvec(folio) == lruvec;
		*tag = hash_ptr(lruvec, DAPTRACE_WALK_LRU_TAG_BITS);
	}
	rcu_read_unlock();
	return ok;
}

static unsigned long daptrace_walk_lru(struct folio *folio)
{
	unsigned long state = DAPTRACE_WALK_LRU_ON, max_seq, tag;
	int gen;

	if (!folio_test_lru(folio))
		return 0;
	if (daptrace_walk_lru_gen(folio, &gen, &max_seq, &tag))
		state |= (unsigned long)(gen + 1) << DAPTRACE_WALK_LRU_GEN_SHIFT |
			 (max_seq & DAPTRACE_WALK_LRU_SEQ_MASK) <<
			 DAPTRACE_WALK_LRU_SEQ_SHIFT |
			 tag << DAPTRACE_WALK_LRU_TAG_SHIFT;
	if (folio_test_active(folio))
		state |= DAPTRACE_WALK_LRU_ACTIVE;
	if (folio_test_referenced(folio))
		state |= DAPTRACE_WALK_LRU_REFERENCED;
	return state;
}

/* The sample state of @folio, found at @pfn, given reclaim a reference if @young. */
static unsigned long daptrace_walk_record(struct folio *folio,
					  unsigned long pfn, bool young)
{
	return pfn << DAPTRACE_WALK_PFN_SHIFT | DAPTRACE_WALK_RECORDED |
	       (young ? DAPTRACE_WALK_HANDED_BACK : 0) | daptrace_walk_lru(folio);
}

static unsigned long daptrace_walk_lru_field(unsigned long state,
					     unsigned int shift,
					     unsigned long mask)
{
	return state >> shift & mask;
}

/*
 * Did the LRU state move, from @then to @now, the way a reference moves it
 * (DAPTRACE_WALK_YOUNG), not (DAPTRACE_WALK_OLD), or the way a reference
 * and a putback both could (DAPTRACE_WALK_UNOBSERVED)?
 *
 * The classic LRU: a reference gained the referenced or active flag.
 * MGLRU: a reference that the aging walk (walk_pte_range(),
 * walk_pmd_range_locked()) or look-around (lru_gen_look_around()) finds
 * moves the folio to the youngest generation of that moment
 * (folio_update_gen() to lru_gen_from_seq(max_seq); the aging walk's
 * max_seq is the one before the aging's inc_max_seq(), so after it its
 * references lie in the second youngest).  Everything else that moves a
 * folio between our two looks moves it elsewhere (6.1 and 6.12:
 * lru_gen_add_folio(); 7.3: lru_gen_folio_seq()):
 *  - folio_inc_gen() (eviction's sort_folio(), the aging's inc_min_seq())
 *    to min_seq + 1, below the second youngest generation (eviction scans
 *    only with more than MIN_NR_GENS generations: scan_folios());
 *  - a putback after isolation (failed migration or reclaim, compaction,
 *    deactivation) of an inactive folio: max_seq - 1 if it is anonymous
 *    and not in the swap cache (or dirty under reclaim), else min_seq or
 *    min_seq + 1;
 *  - a putback of a folio isolated from one of the two youngest
 *    generations, which lru_gen_del_folio() gives PG_active for it: the
 *    youngest (6.1, 6.12; from 7.x only a workingset folio, the others to
 *    max_seq - 1), as are folios eviction rejected (evict_folios()).
 * So, with S the folio's sequence number now, M and M' max_seq at prepare
 * and now: S < M is no reference (the putbacks and min_seq + 1 above);
 * M <= S < M' (an aging ran) is one, where that aging's walk put it; and
 * S = M' is one, unless the folio lay in one of the two youngest
 * generations at prepare (S then >= M - 1, which covers a lruvec of only
 * two generations too), whose putback lands there as well: the module
 * cannot tell, the check is unobserved.  What this counts wrongly: an
 * anonymous folio put back after an aging in the same sample (max_seq - 1
 * is where the aging put its references), two isolations of one folio in
 * one sample (the first putback makes it active), a folio eviction
 * rejected for another reason than a reference.
 *
 * The snapshots are lockless (daptrace_walk_lru_gen()), and the folio can
 * move any number of times between them; what a race costs: a snapshot
 * that was not consistent records no generation (a reference missed); the
 * lruvec hash differing, the folio changed memcg (reparenting, memcg v1's
 * charge moving) and the generations are of two lruvecs: unobserved; if
 * more than 2^DAPTRACE_WALK_LRU_SEQ_BITS agings ran, the recorded bits of
 * M' - M wrap to fewer, and S >= M is only believed for fewer S (a
 * reference missed, never one invented).
 */
static enum daptrace_walk_seen daptrace_walk_lru_seen(unsigned long then,
						      unsigned long now)
{
	unsigned long gen_then, gen_now, seq_then, seq_now, aged, age;

	if (!(then & DAPTRACE_WALK_LRU_ON) || !(now & DAPTRACE_WALK_LRU_ON))
		return DAPTRACE_WALK_OLD;
	if (now & ~then & (DAPTRACE_WALK_LRU_REFERENCED | DAPTRACE_WALK_LRU_ACTIVE))
		return DAPTRACE_WALK_YOUNG;
	gen_then = daptrace_walk_lru_field(then, DAPTRACE_WALK_LRU_GEN_SHIFT,
					   DAPTRACE_WALK_LRU_GEN_MASK);
	gen_now = daptrace_walk_lru_field(now, DAPTRACE_WALK_LRU_GEN_SHIFT,
					  DAPTRACE_WALK_LRU_GEN_MASK);
	if (!gen_then || !gen_now || gen_then == gen_now)
		return DAPTRACE_WALK_OLD;
	if (daptrace_walk_lru_field(then, DAPTRACE_WALK_LRU_TAG_SHIFT,
				    DAPTRACE_WALK_LRU_TAG_MASK) !=
	    daptrace_walk_lru_field(now, DAPTRACE_WALK_LRU_TAG_SHIFT,
				    DAPTRACE_WALK_LRU_TAG_MASK))
		return DAPTRACE_WALK_UNOBSERVED;
	seq_then = daptrace_walk_lru_field(then, DAPTRACE_WALK_LRU_SEQ_SHIFT,
					   DAPTRACE_WALK_LRU_SEQ_MASK);
	seq_now = daptrace_walk_lru_field(now, DAPTRACE_WALK_LRU_SEQ_SHIFT,
					  DAPTRACE_WALK_LRU_SEQ_MASK);
	/* M' - M, and M' - S: S's generation counted back from M''s. */
	aged = (seq_now - seq_then) & DAPTRACE_WALK_LRU_SEQ_MASK;
	age = lru_gen_from_seq(seq_now - (gen_now - 1));
	if (age > aged)
		return DAPTRACE_WALK_OLD;
	if (age)
		return DAPTRACE_WALK_YOUNG;
	/* Into the youngest: was it in one of the two youngest at prepare? */
	if (lru_gen_from_seq(seq_then - (gen_then - 1)) <= 1)
		return DAPTRACE_WALK_UNOBSERVED;
	return DAPTRACE_WALK_YOUNG;
}

/*
 * Did an MGLRU aging run, from @then to @now, on the lruvec of the folio
 * (its max_seq moved; or the folio changed lruvec, which tells nothing
 * and costs only a flush)?  The aging walk clears the accessed bits of the
 * young pages it finds with ptep_clear_young_notify() and
 * pmdp_clear_young_notify() (6.1: ptep_test_and_clear_young(), 7.3 the
 * same as 6.12) and flushes no TLB, as x86's ptep_clear_flush_young() does
 * not either: a translation cached before the walk keeps the bit "set" in
 * the CPU's view, and later accesses through it set no bit again.  Its
 * caller flushes after its next prepares (kernel/tlb.c).
 *
 * Ordering: the walk's clears come before the aging's inc_max_seq(), which
 * publishes the new max_seq with smp_store_release() (6.1, 6.12, 7.3);
 * @now's max_seq was read with the acquire that pairs with it
 * (daptrace_walk_lru_gen()), so the clears of an aging we see here are
 * done before our flush, which therefore drops every translation cached
 * before them.  An aging whose max_seq we do not see yet (its walk still
 * running, or a walker that finished after another made the increment)
 * is seen by a later pass: accesses of the pages it cleared stay hidden a
 * pass longer, none is invented.
 */
static bool daptrace_walk_lru_aged(unsigned long then, unsigned long now)
{
	unsigned long seq = DAPTRACE_WALK_LRU_SEQ_MASK << DAPTRACE_WALK_LRU_SEQ_SHIFT |
			    DAPTRACE_WALK_LRU_TAG_MASK << DAPTRACE_WALK_LRU_TAG_SHIFT;

	if (!daptrace_walk_lru_field(then, DAPTRACE_WALK_LRU_GEN_SHIFT,
				     DAPTRACE_WALK_LRU_GEN_MASK) ||
	    !daptrace_walk_lru_field(now, DAPTRACE_WALK_LRU_GEN_SHIFT,
				     DAPTRACE_WALK_LRU_GEN_MASK))
		return false;
	return (then ^ now) & seq;
}

/*
 * Was the page of @folio, found at @pfn, referenced since prepare,
 * although the accessed bit says no (DAPTRACE_WALK_YOUNG: yes, OLD: no,
 * UNOBSERVED: cannot tell, daptrace_walk_lru_seen())?  @state is what
 * prepare recorded.
 *
 * Nothing, if prepare marked no folio: an idle flag it did not set says
 * nothing of this sample (a page migrated meanwhile, its entry a migration
 * entry when prepare looked, has a folio whose flag an older prepare set,
 * or none did).  A cleared idle flag is a reference reclaim saw in a page
 * table, or an access through a file (folio_referenced_one(),
 * folio_mark_accessed()).  The LRU state moves for more than references,
 * and these moves are no access of this sample:
 *  - Another folio than prepare's: migration (or compaction, NUMA
 *    balancing) copied the page into a new folio, which the LRU placed as
 *    it places any new one (MGLRU: a generation of its own).  The idle
 *    flag moved with the page, the LRU state did not; whether the accessed
 *    bit did, the module cannot know (see "Migration and the accessed bit"
 *    below: without a reference the check is unobserved).
 *  - The reference prepare handed reclaim (folio_set_young()) was taken:
 *    folio_referenced_one() consumed the young flag and counted it, so
 *    reclaim kept or activated the folio (referenced flag, active flag, a
 *    new MGLRU generation) for an access older than this sample.  Had
 *    reclaim also seen a page-table reference then, it would have cleared
 *    the idle flag.  What this misses: a reference MGLRU's aging walk or
 *    look-around took (a new generation, the idle flag kept) in the same
 *    sample as reclaim took ours.
 * And @aged says whether an MGLRU aging ran meanwhile (left as it was if
 * the folio is not prepare's: daptrace_walk_lru_aged()).
 */
static enum daptrace_walk_seen
daptrace_walk_folio_referenced(struct folio *folio, unsigned long pfn,
			       unsigned long state, bool *aged)
{
	unsigned long now = 0;

	if (!(state & DAPTRACE_WALK_RECORDED))
		return DAPTRACE_WALK_OLD;
	if (state >> DAPTRACE_WALK_PFN_SHIFT == pfn) {
		now = daptrace_walk_lru(folio);
		*aged = daptrace_walk_lru_aged(state, now);
	}
	if (daptrace_walk_has_idle() && !folio_test_idle(folio))
		return DAPTRACE_WALK_YOUNG;
	if (state >> DAPTRACE_WALK_PFN_SHIFT != pfn)
		return DAPTRACE_WALK_OLD;
	if ((state & DAPTRACE_WALK_HANDED_BACK) && !folio_test_young(folio))
		return DAPTRACE_WALK_OLD;
	return daptrace_walk_lru_seen(state, now);
}

/*
 * Prepare, under the entry's lock (so @pfn's folio stays mapped): mark the
 * folio idle, hand reclaim the reference whose bit we just cleared
 * (@young), and record the sample in @state.
 */
static void daptrace_walk_mark_locked(unsigned long pfn, bool young,
				      unsigned long *state)
{
	struct page *page = pfn_to_online_page(pfn);
	struct folio *folio;

	if (!page)
		return;
	folio = page_folio(page);
	young = young && daptrace_walk_has_idle();
	if (daptrace_walk_has_idle()) {
		if (young)
			folio_set_young(folio);
		folio_set_idle(folio);
	}
	*state = daptrace_walk_record(folio, pfn, young);
}

/*
 * Prepare an entry whose bit is clear, without its lock: mark the folio
 * at @pfn idle and record the sample in @state, if @still_maps says the
 * entry maps @pfn before the mark and after it.  Migration copies the idle
 * flag into the new folio (folio_migrate_flags()) only after it cleared
 * the entry, a full barrier (ptep_clear_flush(), pmdp_invalidate()); with
 * ours between the mark and the second read, either the copy sees the
 * flag or we see the entry gone and record nothing, rather than a mark
 * the folio under the address never got.
 */
static void daptrace_walk_mark(unsigned long pfn, unsigned long *state,
			       bool (*still_maps)(void *, unsigned long),
			       void *arg)
{
	struct folio *folio = daptrace_walk_folio_get(pfn);

	if (!folio)
		return;
	if (still_maps(arg, pfn)) {
		if (daptrace_walk_has_idle())
			folio_set_idle(folio);
		/* The mark before the re-read; pairs with the clear's barrier. */
		smp_mb__after_atomic();
		if (still_maps(arg, pfn))
			*state = daptrace_walk_record(folio, pfn, false);
	}
	folio_put(folio);
}

/*
 * Check: the folio of a present entry whose bit says "old" (@young false),
 * or, for placement, of any present entry.  @still_maps re-reads the entry
 * after the reference is taken.  Returns what the bit and the folio say
 * (see daptrace_walk_folio_referenced()).
 */
static enum daptrace_walk_seen
daptrace_walk_folio_check(unsigned long pfn, bool young, unsigned long state,
			  bool placement, struct daptrace_walk_page *pg,
			  bool (*still_maps)(void *, unsigned long), void *arg)
{
	struct folio *folio = daptrace_walk_folio_get(pfn);
	enum daptrace_walk_seen seen = young ? DAPTRACE_WALK_YOUNG :
					       DAPTRACE_WALK_OLD;

	if (!folio)
		return seen;
	if (!young)
		seen = daptrace_walk_folio_referenced(folio, pfn, state,
						      &pg->aged);
	if (still_maps(arg, pfn)) {
		if (placement)
			pg->nid = folio_nid(folio);
	} else if (!young) {
		/* Not the folio the entry maps now: its state says nothing. */
		seen = DAPTRACE_WALK_OLD;
	}
	folio_put(folio);
	return seen;
}

/*
 * Migration and the accessed bit.  Since 6.1 a migration entry keeps the
 * accessed bit of the entry it replaced and the new entry gets it back,
 * but only where the swap entry has room for it
 * (migration_entry_supports_ad(), which reads a flag the kernel does not
 * export: an x86 CPU with L1TF limits swap offsets and has no room);
 * before 6.1, and without the room, the new entry is made old.  So a
 * check that finds a migration entry, or an old entry mapping another page
 * than the one prepare recorded (the page migrated, or compaction, NUMA
 * balancing or khugepaged moved it), cannot tell whether the sampled page
 * was accessed before the move: unobserved, not "not accessed", unless
 * the new folio shows a reference (its idle flag, copied by the move, was
 * cleared).  A page a fault maps anew is young, so only old entries are in
 * doubt.  (A THP split since prepare also maps another pfn there, unless
 * the sample is its head page: unobserved too, rarely.)
 */
static int daptrace_walk_verdict(enum daptrace_walk_seen seen,
				 unsigned long state, unsigned long pfn)
{
	if (seen != DAPTRACE_WALK_OLD)
		return seen;
	if ((state & DAPTRACE_WALK_RECORDED) &&
	    state >> DAPTRACE_WALK_PFN_SHIFT != pfn)
		return DAPTRACE_WALK_UNOBSERVED;
	return DAPTRACE_WALK_OLD;
}

/*
 * The pte for @addr in the table the lockless pmd snapshot @pmdval points
 * to; -EAGAIN (in @ret) if the pmd changed meanwhile.
 */
static pte_t daptrace_walk_pte_read(pmd_t *pmd, pmd_t pmdval,
				    unsigned long addr, pte_t **ptep, int *ret)
{
	pte_t ptent;

	*ptep = pte_offset_kernel(&pmdval, addr);
	ptent = ptep_get(*ptep);
	/* Orders the pte read before the pmd re-read, as GUP-fast does. */
	smp_rmb();
	*ret = pmd_same(pmdval, READ_ONCE(*pmd)) ? 0 : -EAGAIN;
	return ptent;
}

static bool daptrace_walk_pte_maps(void *arg, unsigned long pfn)
{
	pte_t ptent = ptep_get(arg);

	return pte_present(ptent) && pte_pfn(ptent) == pfn;
}

/*
 * Check, lockless: was the page at @addr accessed since prepare?  Fills @pg
 * for a present entry.  Returns a &enum daptrace_walk_seen, or -EAGAIN if
 * the pmd changed under the read.
 */
static int daptrace_walk_check_pte(pmd_t *pmd, pmd_t pmdval, unsigned long addr,
				   unsigned long state, bool placement,
				   struct daptrace_walk_page *pg)
{
	pte_t *pte, ptent;
	bool young;
	int ret;

	ptent = daptrace_walk_pte_read(pmd, pmdval, addr, &pte, &ret);
	if (ret)
		return ret;
	if (!pte_present(ptent))
		return softleaf_is_migration(softleaf_from_pte(ptent)) ?
		       DAPTRACE_WALK_UNOBSERVED : DAPTRACE_WALK_OLD;
	pg->pfn = pte_pfn(ptent);
	young = pte_young(ptent);
	if ((young && !placement) || !daptrace_walk_pte_normal(ptent))
		return young;
	return daptrace_walk_verdict(daptrace_walk_folio_check(pg->pfn, young,
			state, placement, pg, daptrace_walk_pte_maps, pte),
			state, pg->pfn);
}

static bool daptrace_walk_pmd_maps(void *arg, unsigned long pfn)
{
	pmd_t pmdval = READ_ONCE(*(pmd_t *)arg);

	return pmd_present(pmdval) && pmd_pfn(pmdval) == pfn;
}

static int daptrace_walk_check_pmd(pmd_t *pmd, pmd_t pmdval, unsigned long addr,
				   unsigned long state, bool placement,
				   struct daptrace_walk_page *pg)
{
	unsigned long head;
	bool young;

	if (!pmd_present(pmdval))
		return 0;
	head = pmd_pfn(pmdval);
	pg->pfn = head + ((addr & ~PMD_MASK) >> PAGE_SHIFT);
	young = pmd_young(pmdval);
	if ((young && !placement) || pmd_devmap(pmdval))
		return young;
	return daptrace_walk_verdict(daptrace_walk_folio_check(head, young,
			state, placement, pg, daptrace_walk_pmd_maps, pmd),
			state, head);
}

static bool daptrace_walk_pud_maps(void *arg, unsigned long pfn)
{
	pud_t pudval = READ_ONCE(*(pud_t *)arg);

	return pud_present(pudval) && pud_leaf(pudval) && pud_pfn(pudval) == pfn;
}

/* A hugetlb pud leaf: its table is this process's own (see above). */
static int daptrace_walk_check_pud(pud_t *pud, pud_t pudval, unsigned long addr,
				   unsigned long state, bool placement,
				   struct daptrace_walk_page *pg)
{
	unsigned long head;
	bool young;

	if (!pud_present(pudval))
		return DAPTRACE_WALK_OLD;
	head = pud_pfn(pudval);
	pg->pfn = head + ((addr & ~PUD_MASK) >> PAGE_SHIFT);
	young = pud_young(pudval);
	if (young && !placement)
		return DAPTRACE_WALK_YOUNG;
	return daptrace_walk_verdict(daptrace_walk_folio_check(head, young,
			state, placement, pg, daptrace_walk_pud_maps, pud),
			state, head);
}

/*
 * Prepare a pte: clear its accessed bit if the lockless read @ptent saw it
 * set (under the lock, re-tested there), mark its folio idle and record its
 * LRU state in @state.  Returns 1 if a bit was cleared, 0 if not, -EAGAIN
 * if the pmd changed first.
 */
static int daptrace_walk_prepare_pte(struct mm_struct *mm, pmd_t *pmd,
				     pmd_t pmdval, unsigned long addr,
				     unsigned long *state)
{
	spinlock_t *ptl;	/* the pte table's lock, guards *pte */
	pte_t *pte, ptent;
	int ret, cleared = 0;

	ptent = daptrace_walk_pte_read(pmd, pmdval, addr, &pte, &ret);
	if (ret || !pte_present(ptent))
		return ret;
	if (!pte_young(ptent)) {
		/* Nothing to clear: mark and record, without the lock. */
		if (daptrace_walk_pte_normal(ptent))
			daptrace_walk_mark(pte_pfn(ptent), state,
					   daptrace_walk_pte_maps, pte);
		return 0;
	}
	/* Both from the snapshot: RCU keeps the table and its lock alive. */
	ptl = pte_lockptr(mm, &pmdval);
	spin_lock(ptl);
	if (unlikely(!pmd_same(pmdval, READ_ONCE(*pmd)))) {
		spin_unlock(ptl);
		return -EAGAIN;
	}
	ptent = ptep_get(pte);
	if (pte_present(ptent)) {
		cleared = daptrace_ptep_test_and_clear_young(pte);
		if (daptrace_walk_pte_normal(ptent))
			daptrace_walk_mark_locked(pte_pfn(ptent), cleared, state);
	}
	spin_unlock(ptl);
	return cleared;
}

/*
 * A pmd leaf the walk reads as one page: a THP, a DAX page (pmd_devmap), or
 * a 2 MiB hugetlb page, which is a pmd leaf (pmd_leaf(): the PSE bit) with
 * or without CONFIG_TRANSPARENT_HUGEPAGE (see above).  A non-present
 * hugetlb entry (migration, poison) has no PSE bit.
 */
static bool daptrace_walk_pmd_leaf(struct vm_area_struct *vma, pmd_t pmdval)
{
	return pmd_trans_huge(pmdval) || pmd_devmap(pmdval) ||
	       (is_vm_hugetlb_page(vma) && pmd_leaf(pmdval));
}

static int daptrace_walk_prepare_pmd(struct mm_struct *mm,
				     struct vm_area_struct *vma, pmd_t *pmd,
				     pmd_t pmdval, unsigned long *state)
{
	spinlock_t *ptl;	/* the pmd table's lock, guards *pmd */
	int cleared = 0;

	if (!pmd_present(pmdval))
		return 0;
	if (!pmd_young(pmdval)) {
		if (!pmd_devmap(pmdval))
			daptrace_walk_mark(pmd_pfn(pmdval), state,
					   daptrace_walk_pmd_maps, pmd);
		return 0;
	}
	ptl = pmd_lock(mm, pmd);
	/* Re-check under the lock: split and zap hold it to change the pmd. */
	pmdval = READ_ONCE(*pmd);
	if (!daptrace_walk_pmd_leaf(vma, pmdval)) {
		spin_unlock(ptl);
		return -EAGAIN;
	}
	if (pmd_present(pmdval)) {
		cleared = daptrace_pmdp_test_and_clear_young(pmd);
		if (!pmd_devmap(pmdval))
			daptrace_walk_mark_locked(pmd_pfn(pmdval), cleared, state);
	}
	spin_unlock(ptl);
	return cleared;
}

static bool daptrace_walk_prepare_pud(struct mm_struct *mm, pud_t *pud,
				      pud_t pudval, unsigned long *state)
{
	spinlock_t *ptl;	/* the mm's page_table_lock, guards *pud */
	bool cleared = false;

	if (!pud_present(pudval))
		return false;
	if (!pud_young(pudval)) {
		daptrace_walk_mark(pud_pfn(pudval), state,
				   daptrace_walk_pud_maps, pud);
		return false;
	}
	ptl = pud_lockptr(mm, pud);
	spin_lock(ptl);
	pudval = READ_ONCE(*pud);
	if (pud_present(pudval) && pud_leaf(pudval)) {
		cleared = daptrace_pudp_test_and_clear_young(pud);
		daptrace_walk_mark_locked(pud_pfn(pudval), cleared, state);
	}
	spin_unlock(ptl);
	return cleared;
}

/**
 * daptrace_walk_observable() - can accesses at @addr of @vma be seen?
 * @vma:	The VMA containing @addr.
 * @addr:	The address.
 *
 * Not in PFN and I/O mappings.  Hugetlb mappings that may share page
 * tables are found only when walking (see above).
 */
bool daptrace_walk_observable(struct vm_area_struct *vma, unsigned long addr)
{
	return !(vma->vm_flags & (VM_PFNMAP | VM_IO));
}

/*
 * Can the pmd table covering @addr of a hugetlb @vma be shared with other
 * processes?  What huge_pmd_share() requires: a shared mapping covering the
 * whole pud-aligned range around @addr.
 */
static bool daptrace_walk_pmd_shareable(struct vm_area_struct *vma,
					unsigned long addr)
{
	unsigned long base = addr & PUD_MASK;

	return (vma->vm_flags & VM_MAYSHARE) && base >= vma->vm_start &&
	       base + PUD_SIZE <= vma->vm_end;
}

/*
 * The pud entry covering @addr, or NULL if an upper level is empty or bad.
 * A table seen here stays linked (see above), so the p4d/pud_offset()
 * helpers may re-read the entries they follow.
 */
static pud_t *daptrace_walk_pud(struct mm_struct *mm, unsigned long addr)
{
	pgd_t *pgd, pgdval;
	p4d_t *p4d, p4dval;

	pgd = pgd_offset(mm, addr);
	pgdval = READ_ONCE(*pgd);
	if (pgd_none(pgdval) || pgd_bad(pgdval))
		return NULL;
	/* Folds onto the pgd unless 5-level paging is on (pgtable_l5_enabled). */
	p4d = p4d_offset(pgd, addr);
	p4dval = READ_ONCE(*p4d);
	if (p4d_none(p4dval) || p4d_bad(p4dval))
		return NULL;
	return pud_offset(p4d, addr);
}

/*
 * Check (@state_out NULL) or prepare the page at @addr.  Returns the check's
 * verdict, or for prepare whether an accessed bit was cleared
 * (DAPTRACE_WALK_YOUNG).
 */
static enum daptrace_walk_seen
daptrace_walk(struct mm_struct *mm, struct vm_area_struct *vma,
	      unsigned long addr, unsigned long state, bool placement,
	      struct daptrace_walk_page *pg, unsigned long *state_out)
{
	bool prepare = state_out;
	pmd_t *pmd, pmdval;
	pud_t *pud, pudval;
	int tries, ret = 0;

	pg->shift = PAGE_SHIFT;
	if (!daptrace_walk_observable(vma, addr))
		return DAPTRACE_WALK_UNOBSERVED;
	pud = daptrace_walk_pud(mm, addr);
	if (!pud)
		return DAPTRACE_WALK_OLD;
	pudval = READ_ONCE(*pud);
	/* Leaf first: x86's pud_bad() is true for a 1 GiB leaf too. */
	if (pud_none(pudval))
		return DAPTRACE_WALK_OLD;
	if (pud_leaf(pudval)) {
		if (!is_vm_hugetlb_page(vma))	/* 1 GiB DAX: see above */
			return DAPTRACE_WALK_UNOBSERVED;
		pg->shift = PUD_SHIFT;
		if (prepare)
			return daptrace_walk_prepare_pud(mm, pud, pudval, state_out) ?
			       DAPTRACE_WALK_YOUNG : DAPTRACE_WALK_OLD;
		return daptrace_walk_check_pud(pud, pudval, addr, state,
					       placement, pg);
	}
	if (pud_bad(pudval))
		return DAPTRACE_WALK_OLD;
	if (is_vm_hugetlb_page(vma) && daptrace_walk_pmd_shareable(vma, addr))
		return DAPTRACE_WALK_UNOBSERVED;
	pmd = pmd_offset(pud, addr);

	rcu_read_lock();
	for (tries = 0; tries < DAPTRACE_WALK_MAX_TRIES; tries++) {
		pg->pfn = DAPTRACE_NO_PFN;
		pg->nid = -1;
		/*
		 * One lockless read: x86-64 pmds are a single word, so this
		 * is what pmdp_get_lockless() is on 6.12 (6.1 lacks it).
		 */
		pmdval = READ_ONCE(*pmd);
		pg->shift = !pmd_none(pmdval) &&
			    daptrace_walk_pmd_leaf(vma, pmdval) ?
			    PMD_SHIFT : PAGE_SHIFT;
		if (pg->shift == PMD_SHIFT)
			ret = prepare ?
				daptrace_walk_prepare_pmd(mm, vma, pmd, pmdval,
							  state_out) :
				daptrace_walk_check_pmd(pmd, pmdval, addr, state,
							placement, pg);
		else if (pmd_none(pmdval))
			ret = 0;
		else if (!prepare && pmd_is_migration_entry(pmdval))
			ret = DAPTRACE_WALK_UNOBSERVED;	/* see above */
		else if (!pmd_present(pmdval) || pmd_bad(pmdval))
			ret = 0;	/* migration entry, or garbage: hands off */
		else
			ret = prepare ?
				daptrace_walk_prepare_pte(mm, pmd, pmdval, addr,
							  state_out) :
				daptrace_walk_check_pte(pmd, pmdval, addr, state,
							placement, pg);
		if (ret != -EAGAIN)
			break;
	}
	rcu_read_unlock();
	if (ret < 0) {
		pg->pfn = DAPTRACE_NO_PFN;
		pg->nid = -1;
		return prepare ? DAPTRACE_WALK_OLD : DAPTRACE_WALK_UNOBSERVED;
	}
	/* Prepare returns whether it cleared a bit: 1, as YOUNG is. */
	return ret;
}

/**
 * daptrace_walk_check() - was the page at @addr accessed since prepare?
 * @mm:		The address space, pinned, mmap_read_lock held.
 * @vma:	The VMA containing @addr, found under that lock.
 * @addr:	The sampled address.
 * @state:	What daptrace_walk_prepare() recorded for it.
 * @placement:	Also find the page's NUMA node.
 * @pg:		The page found: pfn and node, or none; and whether MGLRU
 *		aged its folio's memory since prepare.
 *
 * Return: the verdict.
 */
enum daptrace_walk_seen daptrace_walk_check(struct mm_struct *mm,
					    struct vm_area_struct *vma,
					    unsigned long addr,
					    unsigned long state,
					    bool placement,
					    struct daptrace_walk_page *pg)
{
	pg->pfn = DAPTRACE_NO_PFN;
	pg->nid = -1;
	pg->aged = false;
	return daptrace_walk(mm, vma, addr, state, placement, pg, NULL);
}

/**
 * daptrace_walk_prepare() - start the next sample at @addr.
 * @mm:		The address space, pinned, mmap_read_lock held.
 * @vma:	The VMA containing @addr, found under that lock.
 * @addr:	The address to sample.
 * @state:	Receives what the check will need (0 if nothing).
 * @shift:	Receives log2 of what the entry maps (see
 *		&daptrace_walk_page.shift): a bit cleared there was set by an
 *		access anywhere in that aligned block.
 *
 * Clears the page's accessed bit, marks its folio idle and records its LRU
 * state.
 *
 * Return: whether an accessed bit was cleared (the TLB needs a flush); it
 * was set, so the block was accessed since the bit was last cleared.
 */
bool daptrace_walk_prepare(struct mm_struct *mm, struct vm_area_struct *vma,
			   unsigned long addr, unsigned long *state,
			   unsigned int *shift)
{
	struct daptrace_walk_page pg;
	bool cleared;

	*state = 0;
	cleared = daptrace_walk(mm, vma, addr, 0, false, &pg, state) ==
		  DAPTRACE_WALK_YOUNG;
	*shift = pg.shift;
	return cleared;
}

/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * user/list.h - the core's list in user space: a circular doubly linked
 * list with the semantics of the kernel's <linux/list.h>, which user-space
 * builds of the core cannot include.  Only core/list.h includes this file;
 * kernel builds use <linux/list.h> itself.
 */
#ifndef PTASK_USER_LIST_H
#define PTASK_USER_LIST_H

struct ptask_list {
	struct ptask_list *next, *prev;
};

#define ptask_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

static inline void ptask_list_init(struct ptask_list *head)
{
	head->next = head;
	head->prev = head;
}

static inline bool ptask_list_empty(const struct ptask_list *head)
{
	return head->next == head;
}

static inline void ptask_list_add_tail(struct ptask_list *node,
				       struct ptask_list *head)
{
	node->prev = head->prev;
	node->next = head;
	head->prev->next = node;
	head->prev = node;
}

/* Unlinks @node and leaves it pointing at itself (so a second del is safe). */
static inline void ptask_list_del(struct ptask_list *node)
{
	node->prev->next = node->next;
	node->next->prev = node->prev;
	ptask_list_init(node);
}

#define ptask_list_entry(ptr, type, member) ptask_container_of(ptr, type, member)

#define ptask_list_first(head, type, member) \
	ptask_list_entry((head)->next, type, member)

/* Iterate safely against removal of the current entry. */
#define ptask_list_for_each_safe(pos, tmp, head) \
	for ((pos) = (head)->next, (tmp) = (pos)->next; (pos) != (head); \
	     (pos) = (tmp), (tmp) = (pos)->next)

#define ptask_list_for_each(pos, head) \
	for ((pos) = (head)->next; (pos) != (head); (pos) = (pos)->next)

#endif /* PTASK_USER_LIST_H */

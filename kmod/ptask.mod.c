#include <linux/module.h>
#define INCLUDE_VERMAGIC
#include <linux/build-salt.h>
#include <linux/elfnote-lto.h>
#include <linux/export-internal.h>
#include <linux/vermagic.h>
#include <linux/compiler.h>

BUILD_SALT;
BUILD_LTO_INFO;

MODULE_INFO(vermagic, VERMAGIC_STRING);
MODULE_INFO(name, KBUILD_MODNAME);

__visible struct module __this_module
__section(".gnu.linkonce.this_module") = {
	.name = KBUILD_MODNAME,
	.init = init_module,
#ifdef CONFIG_MODULE_UNLOAD
	.exit = cleanup_module,
#endif
	.arch = MODULE_ARCH_INIT,
};

#ifdef CONFIG_RETPOLINE
MODULE_INFO(retpoline, "Y");
#endif


static const struct modversion_info ____versions[]
__used __section("__versions") = {
	{ 0xfd08c8e3, "hrtimer_sleeper_start_expires" },
	{ 0x88db9f48, "__check_object_size" },
	{ 0x47978cc, "misc_deregister" },
	{ 0x49cd25ed, "alloc_workqueue" },
	{ 0x13c49cc2, "_copy_from_user" },
	{ 0xc5b6f236, "queue_work_on" },
	{ 0x9291cd3b, "memdup_user" },
	{ 0x2155f701, "hrtimer_try_to_cancel" },
	{ 0x9b489671, "nla_put_64bit" },
	{ 0x92540fbf, "finish_wait" },
	{ 0xea82d349, "hrtimer_init" },
	{ 0xffcbde5b, "genlmsg_put" },
	{ 0x90576ec4, "vmemdup_user" },
	{ 0xbfc1d1a, "check_zeroed_user" },
	{ 0x69acdf38, "memcpy" },
	{ 0x3b6c41ea, "kstrtouint" },
	{ 0x37a0cba, "kfree" },
	{ 0xcb2afe84, "kernel_kobj" },
	{ 0x8c26d495, "prepare_to_wait_event" },
	{ 0xe2964344, "__wake_up" },
	{ 0x96a093cf, "ns_capable_noaudit" },
	{ 0xcbd4898c, "fortify_panic" },
	{ 0xbdfb6dbb, "__fentry__" },
	{ 0xe783e261, "sysfs_emit" },
	{ 0x65487097, "__x86_indirect_thunk_rax" },
	{ 0x8b8059bd, "in_group_p" },
	{ 0x92997ed8, "_printk" },
	{ 0xe6d2458e, "do_trace_netlink_extack" },
	{ 0x1d24c881, "___ratelimit" },
	{ 0x1000e51, "schedule" },
	{ 0xa19b956, "__stack_chk_fail" },
	{ 0x296695f, "refcount_warn_saturate" },
	{ 0xf0906b73, "netlink_broadcast" },
	{ 0x7682ba4e, "__copy_overflow" },
	{ 0xa916b694, "strnlen" },
	{ 0x1eb9ab54, "__alloc_skb" },
	{ 0x893abe6b, "netlink_capable" },
	{ 0x7d173e99, "__free_pages" },
	{ 0xc6cbbc89, "capable" },
	{ 0x599fb41c, "kvmalloc_node" },
	{ 0x3ef022ec, "compat_ptr_ioctl" },
	{ 0x20f7ae4a, "__task_pid_nr_ns" },
	{ 0xfe487975, "init_wait_entry" },
	{ 0x8311a48c, "hrtimer_init_sleeper" },
	{ 0x68f31cbd, "__list_add_valid" },
	{ 0xa1194a8a, "fput" },
	{ 0xe25beddd, "init_net" },
	{ 0xc9119dac, "netlink_unicast" },
	{ 0x8b5ecfed, "kobj_sysfs_ops" },
	{ 0xed89811, "kfree_skb_reason" },
	{ 0x8c03d20c, "destroy_workqueue" },
	{ 0x4dfa8d4b, "mutex_lock" },
	{ 0x1468be11, "nla_put" },
	{ 0x364c23ad, "mutex_is_locked" },
	{ 0x48c32817, "kobject_init_and_add" },
	{ 0x16f71312, "sysfs_create_group" },
	{ 0xe1537255, "__list_del_entry_valid" },
	{ 0xcefb0c9f, "__mutex_init" },
	{ 0x68fb37ae, "current_task" },
	{ 0x6c3ea182, "vm_insert_pages" },
	{ 0x169938c1, "__sysfs_match_string" },
	{ 0xfb578fc5, "memset" },
	{ 0xc0b7c197, "hrtimer_start_range_ns" },
	{ 0x844c8938, "misc_register" },
	{ 0x5b8239ca, "__x86_return_thunk" },
	{ 0x6b10bee1, "_copy_to_user" },
	{ 0xd9a5ea54, "__init_waitqueue_head" },
	{ 0xab068b81, "kobject_create_and_add" },
	{ 0xe2d5255a, "strcmp" },
	{ 0x77c2be96, "skb_trim" },
	{ 0x241276ff, "nonseekable_open" },
	{ 0xdd64e639, "strscpy" },
	{ 0x3213f038, "mutex_unlock" },
	{ 0x4d3a5dfe, "init_user_ns" },
	{ 0x11dd3e1e, "alloc_pages" },
	{ 0x3952887, "ktime_add_safe" },
	{ 0x6729d3df, "__get_user_4" },
	{ 0xb43f9365, "ktime_get" },
	{ 0x3c12dfe, "cancel_work_sync" },
	{ 0x56470118, "__warn_printk" },
	{ 0xf0949581, "seq_printf" },
	{ 0x102fe6de, "hrtimer_cancel" },
	{ 0x5caf31dc, "seq_puts" },
	{ 0xab93a5c2, "genl_unregister_family" },
	{ 0x606e9d01, "kmalloc_trace" },
	{ 0xc1d8cfaf, "__fdget" },
	{ 0x754d539c, "strlen" },
	{ 0x7aa1756e, "kvfree" },
	{ 0x9ec07055, "genl_register_family" },
	{ 0xe784202e, "netlink_has_listeners" },
	{ 0x99f2d00a, "sysfs_emit_at" },
	{ 0xe2c17b5d, "__SCT__might_resched" },
	{ 0x7a7caba8, "kmalloc_caches" },
	{ 0x2d3385d3, "system_wq" },
	{ 0x176238f7, "kobject_put" },
	{ 0x9060323f, "module_layout" },
};

MODULE_INFO(depends, "");


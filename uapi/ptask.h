/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note OR MIT */
/*
 * ptask.h - the ptask ABI: ioctls on /dev/ptask, the "ptask" generic-netlink
 * family and the names under /sys/kernel/ptask/.
 *
 * This header is the contract.  ptask.ko, ptaskd, libptask and every test
 * include it; none of them restates it.
 *
 * ======================================================================
 * Objects
 * ======================================================================
 *
 * A *graph* is a dataflow graph of *ptasks* (a GPU kernel or a CPU function)
 * whose *ports* are joined by *channels* (bounded FIFOs).  *Datablocks* flow
 * through channels; a *template* describes a datablock's geometry.  Every
 * object has a u32 *handle*, unique in the whole namespace (never 0, never
 * reused while the object lives).  Templates, ptasks, ports and channels
 * belong to one graph and live as long as it; datablocks are
 * reference-counted and live while a client, a channel, a port or an
 * invocation holds them.
 *
 * A *client* is one open file description of /dev/ptask.  A client may use
 * an object only if it has opened the object's graph (PTASK_IOC_GRAPH_OPEN);
 * otherwise -EACCES.  A graph lives while at least one client has it open;
 * when the last one closes its fd (or dies, however it dies) the graph and
 * everything in it is freed.
 *
 * Every ioctl argument is an extensible struct whose first member is its
 * own size in bytes (@size).  The size bits of the ioctl command number
 * are ignored (only direction, type and number are matched): @size says
 * which version of the struct the caller speaks.  The kernel reads @size, then the struct with
 * copy_struct_from_user(): a smaller @size than the first published version
 * is -EINVAL, a larger one with non-zero bytes past what this kernel knows
 * is -E2BIG (and any @size over a page is -E2BIG, as for clone3 and
 * openat2), a bad pointer is -EFAULT.  Non-zero reserved fields and
 * unknown flag bits are -EINVAL.  Pointers travel as __u64.  Timeouts are
 * absolute CLOCK_MONOTONIC times in ns; 0 means "no timeout".  Output
 * members are written back only on success.
 *
 * Errors are checked in this order for every call, and each is a distinct
 * test: unknown command (-ENOTTY); @size and copy (-EINVAL, -E2BIG,
 * -EFAULT); reserved fields, flags and value ranges (-EINVAL); copies of
 * further user buffers such as code or an outputs array (-EFAULT); the
 * caller's role (-EPERM for executor calls); handles (-ENOENT: no object
 * of that type with that handle; -EACCES: the caller has not opened its
 * graph); the graph's state (-ESHUTDOWN once terminated, -EIO once
 * failed: any call naming an object of such a graph); then relations
 * between objects (-EINVAL: a port of another graph, a port of the wrong
 * direction...) and the call's own conditions, as listed per call.
 *
 * ======================================================================
 * Calls
 * ======================================================================
 *
 * PTASK_IOC_GRAPH_OPEN (struct ptask_graph_open)
 *	Create a graph or open an existing one by @name.  With
 *	PTASK_GRAPH_CREATE a missing graph is created, owned by the caller's
 *	euid/egid, with permission bits @mode (like a file's: the caller's
 *	class (owner; group, supplementary groups included; other) needs both
 *	read and write, 06 << class shift, to open it; a process with
 *	CAP_DAC_OVERRIDE in the initial namespace passes).  With
 *	PTASK_GRAPH_EXCL as well, an existing graph is -EEXIST; without
 *	EXCL, CREATE opens an existing graph only if the caller's euid owns
 *	it, else -EEXIST (a name another user took first is never joined
 *	silently: open it without CREATE to join it by its mode).  Without
 *	CREATE, a missing graph is -ENOENT.  An empty name with CREATE makes
 *	an anonymous graph nobody else can open.  Opening the same graph twice
 *	from one client returns the same handle.  Errors: -EINVAL (name not
 *	NUL-terminated, bad characters, mode > 0777, EXCL without CREATE, an
 *	empty name without CREATE), -EEXIST, -ENOENT, -EACCES, -ENOMEM.
 *
 * PTASK_IOC_GRAPH_CLOSE (struct ptask_graph_ctl)
 *	The caller lets go of @graph (also a terminated or failed one); the
 *	graph is freed when no client has it open.  Closing the fd closes
 *	every graph it opened.  Another thread of the same fd blocked on the
 *	graph wakes and fails: -EACCES (the graph lives on for others) or
 *	-ENOENT (it was freed).  Errors: -EINVAL, -ENOENT (the caller does not
 *	have it open).
 *
 * PTASK_IOC_TEMPLATE_OPEN (struct ptask_template_open)
 *	Describe a datablock geometry in @graph: @stride bytes per element,
 *	@dims (x, y, z; each >= 1), a @kind (fixed-stride array, variable-size
 *	record stream, opaque bytes) and a @binding for GPU code (global
 *	memory, constant memory, formal parameter).  Templates are
 *	*compatible* when kind, stride and dims are equal.  Errors: -EINVAL
 *	(stride 0, a dim 0, bytes over PTASK_DATABLOCK_MAX_BYTES, bad kind or
 *	binding), -ENOENT, -EACCES, -ESHUTDOWN.
 *
 * PTASK_IOC_PTASK_OPEN (struct ptask_ptask_open)
 *	Add a ptask to @graph: @kind GPU (with @code_len bytes of PTX or cubin
 *	at @code and an @entry point name) or CPU (no code: a host function
 *	of the owning program), with @nports ports to be opened.  A CPU
 *	ptask opened with PTASK_PTASK_SELF is run by its creator: its
 *	invocations queue on the creating fd, which takes them with
 *	EXEC_TAKE and PTASK_TAKE_SELF (no executor registration needed) and
 *	completes them with EXEC_COMPLETE, so the privileged executor never
 *	runs a client's host code; when that fd closes, the ptask's graph
 *	fails (-EIO).  Other ptasks, of either kind, are queued to the
 *	registered executors, which see the kind in struct ptask_invocation.  Its proxy priority starts
 *	as the caller's nice value, its static priority at
 *	PTASK_PRIO_DEFAULT.  A ptask runs when every input and sticky port is
 *	Occupied and it has at least one plain input port (a ptask fed only
 *	by sticky ports, or with no input, never runs).  Errors: -EINVAL
 *	(nports 0 or over PTASK_MAX_PORTS, GPU without code or entry, CPU
 *	with code, code over PTASK_CODE_MAX_BYTES, PTASK_PTASK_SELF on a GPU
 *	ptask), -EFAULT, -ENOENT, -EACCES,
 *	-ESHUTDOWN, -EIO, -EBUSY (the graph is running: its shape is fixed).
 *
 * PTASK_IOC_PORT_OPEN (struct ptask_port_open)
 *	Add a port to @ptask.  @kind is input, output or sticky (an input
 *	that keeps its datablock across invocations until a new one
 *	arrives).  @flags: PTASK_PORT_RUNTIME (consumed by the run-time, e.g.
 *	to size the launch, not passed to the GPU code), PTASK_PORT_INOUT (an
 *	input whose datablock the code updates in place and emits on output
 *	port @inout_peer).  @param_index is the formal parameter the port
 *	binds to.  @template is 0 (any) or a template of the same graph.
 *	Ports are numbered 0, 1, ... in the order they are opened.  Errors:
 *	-EINVAL (also @param_index > 255, a template of another graph, an
 *	@inout_peer that is not an output port of the same ptask), -ENOENT,
 *	-EACCES, -ESHUTDOWN, -EIO, -EBUSY (the graph is running), -ENOSPC
 *	(all @nports opened).
 *
 * PTASK_IOC_CHANNEL_OPEN (struct ptask_channel_open)
 *	Join @src (an output port, or 0 for a graph input the client pushes
 *	into) to @dst (an input or sticky port, or 0 for a graph output the
 *	client pulls from); not both 0.  @capacity >= 1 datablocks.
 *	@template is 0 or a template of the graph; it, and the templates of
 *	the two ports, must be compatible with each other wherever present
 *	(-EPROTOTYPE).  An input port takes one channel (-EBUSY for a
 *	second); an output port takes any number (fan-out).  Errors: -EINVAL
 *	(capacity 0 or over PTASK_CHANNEL_MAX_CAPACITY, both ends 0, @src not
 *	an output port, @dst not an input port, ports or template of another
 *	graph), -ENOENT, -EACCES, -ESHUTDOWN, -EIO, -EPROTOTYPE, -EBUSY (the
 *	port has its channel, or the graph is running).
 *
 * PTASK_IOC_LOOKUP (struct ptask_lookup)
 *	Find an object of @type named @name in @graph (names are given at
 *	open time).  Lets a second process that opened a shared graph by
 *	name find its channels.  Errors: -EINVAL, -ENOENT, -EACCES.
 *
 * PTASK_IOC_DATABLOCK_CREATE (struct ptask_datablock_create)
 *	Allocate a datablock of @bytes (or, when @template is non-zero, the
 *	template's size for an array and opaque template, @records * stride
 *	for a record stream) holding @records records.  Returns its @handle
 *	and the @mmap_offset at which the caller mmaps it (shared pages: the
 *	producer, the consumers and the executor see the same memory).  The
 *	caller holds one reference.  A datablock is shared, never copied:
 *	bytes written, or a record count set, after a push are what every
 *	holder sees.  The datablock's memory, rounded up to pages, is charged
 *	to the caller's uid while it lives (the uid the fd was opened with);
 *	with a per-uid limit set (/sys/kernel/ptask/limits/uid_bytes in
 *	kernel mode, ptaskd --uid-bytes in user mode), a datablock that
 *	would take a uid other than 0 past it is -EDQUOT.  An executor
 *	making an output of invocation @invocation it took passes
 *	PTASK_DATABLOCK_CREATE_OUTPUT: the datablock is charged to the uid
 *	that owns the invocation's ptask instead, and counts against that
 *	uid's limit (the executor fails the invocation with the -EDQUOT).
 *	Errors: -EINVAL (0 bytes, over PTASK_DATABLOCK_MAX_BYTES, bytes
 *	given with a template, a record stream's @records 0 or over its
 *	capacity, more @records than bytes, unknown flags, @invocation
 *	without PTASK_DATABLOCK_CREATE_OUTPUT or 0 with it), -EPERM
 *	(PTASK_DATABLOCK_CREATE_OUTPUT from a client that neither is an
 *	executor nor took @invocation), -ENOENT (also an @invocation an
 *	executor has not taken),
 *	-EACCES, -ESHUTDOWN, -EIO, -EDQUOT, -ENOMEM.
 *
 * PTASK_IOC_DATABLOCK_RELEASE (struct ptask_datablock_release)
 *	Drop one reference the caller holds.  Mappings stay valid until
 *	munmap.  Errors: -ENOENT (the caller holds no reference to it).
 *
 * PTASK_IOC_PUSH (struct ptask_push)
 *	Queue @datablock (held by the caller) on graph-input @channel.  The
 *	caller keeps its reference.  Blocks while the channel is full unless
 *	PTASK_NONBLOCK or O_NONBLOCK (-EAGAIN), until @timeout_ns
 *	(-ETIMEDOUT); a signal gives -EINTR (or a restart).  With
 *	PTASK_PUSH_SET_RECORDS the datablock's record count becomes @records
 *	first: at most its bytes (over its stride, if it was made from a
 *	record stream's template).  Errors: -EINVAL (channel not a graph
 *	input, a record count over that), -ENOENT,
 *	-EACCES, -EPROTOTYPE (datablock does not fit the channel's template),
 *	-EAGAIN, -ETIMEDOUT, -EINTR, -ESHUTDOWN (also when the graph is
 *	terminated while the caller sleeps), -EIO (the graph failed).
 *
 * PTASK_IOC_PULL (struct ptask_pull)
 *	Take the oldest datablock from graph-output @channel; the caller
 *	holds a reference to it and gets its @handle, @mmap_offset, @bytes and
 *	@records.  Blocks like push while the channel is empty.  A client
 *	holds at most PTASK_HOLD_MAX references to one datablock (a
 *	datablock passed through and pulled again and again without a
 *	release): past that the pull is -EMFILE and the datablock stays in
 *	the channel.  Errors: -EINVAL (not a graph output), -ENOENT,
 *	-EACCES, -EAGAIN, -ETIMEDOUT, -EINTR, -ESHUTDOWN, -EIO, -ENOMEM,
 *	-EMFILE.
 *
 * PTASK_IOC_GRAPH_RUN (struct ptask_graph_ctl)
 *	Start @graph: from now on ptasks whose inputs are all Occupied are
 *	queued for the executor.  Pushes are accepted before run.  Errors:
 *	-ENOENT, -EACCES, -ESHUTDOWN, -EALREADY.
 *
 * PTASK_IOC_GRAPH_TERMINATE (struct ptask_graph_ctl)
 *	Stop @graph for every client: every blocked pusher and puller wakes
 *	with -ESHUTDOWN, queued invocations are dropped, every datablock the
 *	graph holds is released and its name is freed.  The handles stay
 *	valid (calls on them give -ESHUTDOWN) until the graph is closed.
 *	Errors: -ENOENT, -EACCES, -ESHUTDOWN.
 *
 * PTASK_IOC_PTASK_SET_PRIORITY (struct ptask_priority)
 *	Set the static priority (PTASK_PRIO_MIN..PTASK_PRIO_MAX) and/or the
 *	proxy priority (a nice value, -20..19; the OS priority of the process
 *	the ptask works for) of @ptask.  Raising a proxy priority above the
 *	caller's own nice needs CAP_SYS_NICE (-EPERM).  Errors: -EINVAL,
 *	-ENOENT, -EACCES, -EPERM, -ESHUTDOWN.
 *
 * PTASK_IOC_PTASK_SET_GEOMETRY (struct ptask_geometry)
 *	Set the launch geometry of GPU @ptask (grid and block, x*y*z each;
 *	all zero: inferred from the templates).  Errors: -EINVAL (partly
 *	zero, a block over 1024 threads or over 64 in z, a grid over 65535
 *	in y or z, a CPU ptask), -ENOENT, -EACCES, -ESHUTDOWN.
 *
 * Executor calls (only on the fd of a registered executor, else -EPERM;
 * registration is PTASK_CMD_EXEC_REGISTER over generic netlink and needs
 * CAP_SYS_ADMIN; any fd may take and complete the invocations of its own
 * PTASK_PTASK_SELF ptasks):
 *
 * PTASK_IOC_EXEC_TAKE (struct ptask_exec_take)
 *	Take up to @max_invocations queued invocations (blocking like pull
 *	while none is queued): with PTASK_TAKE_SELF those of the caller's own
 *	PTASK_PTASK_SELF ptasks (any fd), else those queued to executors.  Each fills a struct ptask_invocation and
 *	@n_ports consecutive struct ptask_invocation_port records starting at
 *	@first_port in the @ports array (every port of the ptask: inputs with
 *	their datablock, outputs with datablock 0).  An invocation whose ports
 *	do not fit in @max_ports is left queued for the next call; if even the
 *	first does not fit, -ENOSPC.  One call returns at most
 *	PTASK_TAKE_MAX_INVOCATIONS invocations and PTASK_TAKE_MAX_PORTS port
 *	records.  The executor may mmap every datablock of an invocation it
 *	took.
 *
 *	With PTASK_TAKE_AHEAD (GPU executors: chains and streams in one
 *	call) the core completes ahead each invocation it takes of a GPU
 *	ptask without in/out ports whose every output has a template and is
 *	read by GPU ptasks alone, or by pulls alone while the ptask's next
 *	invocation is queued (PTASK_INV_BACKLOG): it makes the output
 *	datablocks (the template's size, from the owner's memory, not
 *	zeroed), names them in the output port records (@datablock,
 *	@generation, @mmap_offset, @bytes), moves them on as EXEC_COMPLETE
 *	with PTASK_EXEC_COMPLETE_AHEAD would, and marks the invocation
 *	PTASK_INV_AHEAD; what that made ready is taken in the same call, up
 *	to the limits.  The executor must write those outputs and settle
 *	each such invocation (PTASK_EXEC_COMPLETE_SETTLE: a failure fails
 *	the graph); it may not complete it otherwise.  The invocation keeps
 *	a reference to its outputs until then.
 *
 *	With PTASK_TAKE_OUTPUTS (an executor for which a DATABLOCK_CREATE
 *	per output costs a round trip) the core also makes, for every other
 *	invocation it takes that is not a segment, the datablock of each
 *	output port that has a template and is no in/out port's peer, as
 *	DATABLOCK_CREATE with PTASK_DATABLOCK_CREATE_OUTPUT would (the
 *	template's size, the owner's memory, not zeroed), and names it in
 *	the output's record (@datablock, @generation, @mmap_offset, @bytes,
 *	flag PTASK_INVP_MADE).  The invocation holds it: the executor maps
 *	it, writes it and names it in EXEC_COMPLETE's outputs, or leaves it
 *	(it goes with the invocation).  An output the core could not make
 *	(-ENOMEM, -EDQUOT) has datablock 0: the executor creates it and
 *	meets the same error.
 *
 *	With PTASK_TAKE_FUSE (GPU executors that launch a run of kernels as
 *	one unit) a *segment* is taken as one invocation: a GPU ptask H
 *	whose one output port has one channel, to the one input port of a
 *	GPU ptask M, ..., to the one input port of a GPU ptask T, where
 *	every link is such a channel, empty, with a template on the output
 *	port (the intermediate's size), no tunnel, no in/out, run-time or
 *	by-value port on it, each member idle, owned by H's process and not
 *	PTASK_PTASK_SELF.  The invocation (PTASK_INV_SEGMENT, @ptask H) has
 *	the port records of H, then of M, ..., then of T, in that order,
 *	each with @member set to its ptask; a link's two ends are marked
 *	PTASK_INVP_FUSED and have no datablock: the intermediate exists
 *	only as the executor's scratch between two of its launches, never
 *	as a datablock.  H and every member count as Executing until the
 *	invocation completes; EXEC_COMPLETE names T's output ports.  A
 *	segment stops where its records would exceed @max_ports.  A segment
 *	is never completed ahead.
 *
 *	If the results cannot be copied out (-EFAULT), the invocations
 *	taken fail their graphs (-EIO) rather than vanish.  Errors: -EINVAL,
 *	-EFAULT, -ENOSPC, -EAGAIN, -ETIMEDOUT, -EINTR, -EPERM (also when the
 *	fd is unregistered while the call sleeps).
 *
 * PTASK_IOC_EXEC_COMPLETE (struct ptask_exec_complete)
 *	Finish invocation @id with @status (0 or a negative errno), the
 *	@gpu_ns it used, and @n_outputs (port index, datablock) pairs at
 *	@outputs, one per output port.  Each output datablock is either held
 *	by the executor (its reference passes to the port) or an input of
 *	the same invocation (pass-through); it must fit the port's template
 *	and those of every channel the port feeds and of the ports behind
 *	them.  A negative @status fails the graph (its blocked callers wake
 *	with -EIO); the outputs are then not checked, only released.
 *	Outputs are checked in passes, so the error does not depend on their
 *	order: port indices and count (-EINVAL), datablocks (-ENOENT),
 *	templates (-EPROTOTYPE).  A segment (PTASK_INV_SEGMENT) is completed
 *	with the outputs of its last ptask, plainly (AHEAD or SETTLE:
 *	-EINVAL); each member then counts one invocation and an equal share
 *	of @gpu_ns.  Errors: -EINVAL (bad
 *	port index, duplicate or missing output), -ENOENT (no such
 *	invocation taken by this fd, or unknown datablock), -EPROTOTYPE,
 *	-ECANCELED (the graph went away; outputs are released), -EPERM.
 *
 *	Chains ahead (issue 12; @flags): an executor that has queued an
 *	invocation's work and a fence on its device, and whose outputs go
 *	on to GPU ptasks or to graph outputs only (no output port feeds a
 *	CPU ptask or a tunnel), may complete it at once with
 *	PTASK_EXEC_COMPLETE_AHEAD, @status 0 and its outputs: they move on
 *	as with a plain completion (the ptasks downstream become ready and
 *	the executor queues them behind the work on the device; the ptask
 *	itself may run again), but the invocation stays taken, Settling: it
 *	counts as running for the owner's GPU budget, its inputs stay
 *	mappable, and the executor owes it a settle.  An output it put in a
 *	graph output is pulled only after the settle (a pull meanwhile
 *	waits, or is -EAGAIN with PTASK_NONBLOCK): a client never maps bytes
 *	the device has not written.  A second EXEC_COMPLETE with
 *	PTASK_EXEC_COMPLETE_SETTLE, the same @id, no outputs, and the
 *	real @status and @gpu_ns once its fence passed, ends it: @gpu_ns
 *	is charged then, and a negative @status fails the graph as a failed
 *	completion does.  AHEAD on an invocation with an output that a CPU
 *	ptask or a tunnel reads, or whose datablock already waits for
 *	another invocation's settle in a graph output, on one already
 *	completed ahead, or with a negative @status, and SETTLE on one not
 *	completed ahead or with outputs, are -EINVAL; both flags at once
 *	-EINVAL.  An
 *	executor that goes away with invocations Settling fails their
 *	graphs (as with any invocation it took).  No new ioctl: the
 *	settle is this one with a flag (the smaller ABI change).
 *
 * PTASK_IOC_EXEC_PTASK_INFO (struct ptask_exec_ptask_info)
 *	Read any ptask's kind, port count, entry name, geometry and code
 *	size (@code_len); with @code non-zero also its code, copied there
 *	(@code_len must then be at least the code's size, else -ENOSPC).
 *	Call with @code 0 first to learn the size.  Errors: -EINVAL, -EPERM,
 *	-ENOENT, -ENOSPC, -EFAULT.
 *
 * PTASK_IOC_EXEC_FORGOTTEN (struct ptask_exec_forgotten)
 *	Death notices: the handles of datablocks that died since the last
 *	call, among those an executor was ever handed (an input or output
 *	of an invocation it took, or one it made), so it frees their device
 *	copies at once rather than when memory runs short (a handle is
 *	reused only after 2^32 others).  Every registered executor gets
 *	every notice, in the order the datablocks died; up to
 *	PTASK_FORGOTTEN_MAX wait per executor, and past that they are
 *	dropped and counted in @lost (the executor then keeps its copies
 *	until they are evicted, as with no notice).  While notices wait,
 *	poll() reports EPOLLPRI on the fd and EXEC_TAKE's @forgotten says
 *	how many.  Up to @max_handles are written to @handles; @pending
 *	says how many still wait.  Errors: -EINVAL (flags, @max_handles 0),
 *	-EPERM (not an executor), -EFAULT (the notices copied are gone).
 *
 * ======================================================================
 * Record-stream tunnels (issue 12, item 5; HiWayLib's batched copy)
 * ======================================================================
 *
 * A *tunnel* batches the small pushes of many concurrent clients into one
 * datablock, so one invocation (one copy in, one kernel launch, one copy
 * out) serves all of them.  It is a pair of channels opened with
 * PTASK_CHANNEL_TUNNEL around one ptask P:
 *
 *   the input end: @src 0 (clients push), @dst an input port of P;
 *   the output end: @src an output port of P, @dst 0 (clients pull).
 *
 * Both ends need a record-stream template (PTASK_TEMPLATE_RECORDS) on the
 * channel or its port (-EPROTOTYPE without): a push is a whole number of
 * records, and its slice of the output is the same number of records at
 * the output's stride.  A ptask has at most one tunnel of each end
 * (-EBUSY); the two ends find each other through P, in either order.
 *
 * Pushes on the input end are gathered: the core keeps a reference to each
 * pushed datablock (its first @records x stride bytes count; the push
 * returns at once, it does not wait for the batch) and, when the records
 * gathered reach the threshold, or the oldest has waited for the
 * timeout, copies them back to back into one new datablock, the *batch*,
 * which enters the input port as one datablock: one invocation of P.  The
 * batch begins with a struct ptask_tunnel_head (PTASK_TUNNEL_HEAD_BYTES:
 * its record count and stride, so that a GPU kernel, which sees no
 * datablock's size, knows how many records follow), then the records; its
 * record count is theirs.  A
 * batch also closes when it holds @capacity pushes or when the next push
 * would pass the template's record capacity.  P must emit, on the output
 * end's port, one datablock per batch with as many records as the batch
 * had, laid out the same (the head, then one record per record in; a map
 * from record i to record i, such as an in-place PTASK_PORT_INOUT port;
 * the output's stride is its size less the head over its records; an
 * output of record count 0, as an executor makes one by size, counts as
 * having the batch's); a batch
 * that comes back with another record count, or a size that is not the
 * head and a whole number of records, gives -EPROTO to each of its
 * pullers.  A slice holds the records alone, no head.
 *
 * The output is split back by *ticket*: the ticket of a push is the
 * handle of the datablock pushed.  PTASK_IOC_PULL on the output end with
 * PTASK_PULL_SLICE and @datablock set to that handle blocks (like any
 * pull) until that push's batch has come back, then returns a new
 * datablock holding exactly that push's records of the output (the
 * caller holds it, as for any pull).  Only the client that pushed may
 * pull its slice (-ENOMSG for anyone else, for a handle with no push
 * waiting on this tunnel, and for a slice already pulled).  Slices may be
 * pulled in any order, so a thread per request (a FUSE request thread)
 * pushes its datablock and pulls with it as ticket, whatever the other
 * threads do.  A datablock may be in one push of a tunnel at a time until
 * its slice is pulled (-EBUSY); a push of no records is -EINVAL.  A plain
 * pull on the output end is -EINVAL.  Poll's EPOLLIN does not report
 * slices: pull with a timeout.  A client that dies (or closes the graph)
 * with pushes in a batch loses only its slices: the batch still runs for
 * the others, and its part of the output is dropped.  The output end
 * counts batches that came back and still have slices to pull against
 * its @capacity: when that is full, P's outputs wait (as on any full
 * channel).
 *
 * Settings of the input end (the output end takes none: -EINVAL):
 * @tunnel_bytes, the threshold in bytes of records gathered (0: the
 * namespace's default: what the executor's copy curve says a copy needs
 * to amortize its fixed cost, or PTASK_TUNNEL_DEFAULT_BYTES before an
 * executor calibrated it); @tunnel_records, a threshold in records too
 * (0: none), whichever is reached first; @tunnel_timeout_ns, the longest a
 * pushed record waits for its batch to close (0: the default,
 * PTASK_TUNNEL_DEFAULT_TIMEOUT_NS unless calibrated).  Limits: bytes up
 * to PTASK_DATABLOCK_MAX_BYTES, timeout up to PTASK_TUNNEL_MAX_TIMEOUT_NS
 * (-EINVAL past them).  PTASK_CHANNEL_OPEN with PTASK_CHANNEL_TUNNEL_SET
 * changes them on an open input end: @handle names it (in), @graph,
 * @src, @dst, @capacity and @template must be 0, @name empty; the new
 * threshold applies from the next push, the new timeout from the next
 * batch.  Errors: -EINVAL (not a tunnel's input end, settings out of
 * range), -ENOENT, -EACCES, -ESHUTDOWN, -EIO.
 *
 * ======================================================================
 * Readiness (poll, epoll, select)
 * ======================================================================
 *
 * EPOLLIN: a graph output channel of a graph the client has open holds a
 * datablock, an invocation of one of its PTASK_PTASK_SELF ptasks is
 * queued, or (executor) an invocation is queued for executors.  EPOLLOUT: a graph
 * input channel of such a graph has room.  EPOLLERR: one of its graphs was
 * terminated or failed.
 *
 * ======================================================================
 * mmap
 * ======================================================================
 *
 * mmap(NULL, bytes, PROT_READ|PROT_WRITE, MAP_SHARED, fd, mmap_offset)
 * maps a datablock the caller holds (or, for an executor, one of an
 * invocation it took); the fd must be open O_RDWR.  MAP_PRIVATE is
 * -EINVAL; a length past the datablock's size rounded up to whole pages
 * -EINVAL; an offset that names no datablock the caller may map -ENOENT.
 * Offsets from PTASK_RING_MMAP_BASE up map rings' regions instead (see
 * "Kernel-mode rings" at the end).
 * The pages are inserted as ordinary pages, so get_user_pages() and
 * cuMemHostRegister() can pin a mapping.  A mapping stays valid after
 * the datablock is released, and after the fd is closed: it keeps the
 * pages, not the fd's client (closing the last fd closes its graphs and
 * datablocks even while a mapping, a forked child's say, lives on).
 * PROT_EXEC is -EPERM, and mprotect() cannot add it later (-EACCES).
 * Pages given back with MADV_DONTNEED come back with their bytes on the
 * next access.
 */
#ifndef _UAPI_LINUX_PTASK_H
#define _UAPI_LINUX_PTASK_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define PTASK_ABI_VERSION		1
#define PTASK_DEVICE_NAME		"ptask"		/* /dev/ptask */

#define PTASK_NAME_MAX			64	/* with the NUL */
#define PTASK_MAX_PORTS			64
#define PTASK_CODE_MAX_BYTES		(16U << 20)
#define PTASK_DATABLOCK_MAX_BYTES	(256ULL << 20)
/* references one client may hold to one datablock (PULL: -EMFILE) */
#define PTASK_HOLD_MAX			65536U
#define PTASK_CHANNEL_MAX_CAPACITY	65536
#define PTASK_PRIO_MIN			0
#define PTASK_PRIO_MAX			99
#define PTASK_PRIO_DEFAULT		50
#define PTASK_NICE_MIN			(-20)
#define PTASK_NICE_MAX			19
#define PTASK_TAKE_MAX_INVOCATIONS	64	/* most one EXEC_TAKE returns */
#define PTASK_TAKE_MAX_PORTS		1024	/* most port records likewise */

/* Flags shared by the blocking calls (push, pull, exec_take). */
#define PTASK_NONBLOCK			(1U << 0)

/* struct ptask_exec_take.flags */
#define PTASK_TAKE_SELF			(1U << 1)
/*
 * PTASK_TAKE_AHEAD: the core completes ahead itself what it can of what
 * it takes, so one call takes a stream or a chain (see EXEC_TAKE).
 */
#define PTASK_TAKE_AHEAD		(1U << 2)
/*
 * PTASK_TAKE_FUSE: a run of GPU ptasks linked by channels only they use
 * comes as one invocation, a segment (see EXEC_TAKE).
 */
#define PTASK_TAKE_FUSE			(1U << 3)
/*
 * PTASK_TAKE_OUTPUTS: the core makes the outputs' datablocks of what it
 * takes (see EXEC_TAKE): no DATABLOCK_CREATE per output.
 */
#define PTASK_TAKE_OUTPUTS		(1U << 4)
#define PTASK_TAKE_FLAGS_ALL		(PTASK_NONBLOCK | PTASK_TAKE_SELF | \
					 PTASK_TAKE_AHEAD | PTASK_TAKE_FUSE | \
					 PTASK_TAKE_OUTPUTS)

/* struct ptask_graph_open.flags */
#define PTASK_GRAPH_CREATE		(1U << 0)
#define PTASK_GRAPH_EXCL		(1U << 1)
#define PTASK_GRAPH_FLAGS_ALL		(PTASK_GRAPH_CREATE | PTASK_GRAPH_EXCL)

/**
 * struct ptask_graph_open - argument of PTASK_IOC_GRAPH_OPEN
 * @size: sizeof(struct ptask_graph_open)
 * @flags: PTASK_GRAPH_*
 * @mode: permission bits of a graph this call creates (0..0777)
 * @handle: out: the graph
 * @name: NUL-terminated; letters, digits, '.', '_', '-' and '/' only
 */
struct ptask_graph_open {
	__u32 size;
	__u32 flags;
	__u32 mode;
	__u32 handle;
	char name[PTASK_NAME_MAX];
};
#define PTASK_GRAPH_OPEN_SIZE_VER0	80

enum ptask_template_kind {
	PTASK_TEMPLATE_ARRAY = 0,	/* fixed-stride array of dims elements */
	PTASK_TEMPLATE_RECORDS = 1,	/* variable-size stream of records */
	PTASK_TEMPLATE_OPAQUE = 2,	/* bytes the run-time does not interpret */
	__PTASK_TEMPLATE_KIND_MAX,
};

enum ptask_binding {
	PTASK_BIND_GLOBAL = 0,		/* global device memory */
	PTASK_BIND_CONSTANT = 1,	/* constant memory */
	PTASK_BIND_PARAM = 2,		/* passed by value as a kernel parameter */
	__PTASK_BIND_MAX,
};

/**
 * struct ptask_template_open - argument of PTASK_IOC_TEMPLATE_OPEN
 * @size: sizeof(struct ptask_template_open)
 * @flags: must be 0
 * @graph: the graph the template belongs to
 * @kind: enum ptask_template_kind
 * @binding: enum ptask_binding
 * @stride: bytes per element (or per record)
 * @dims: elements in x, y, z (each >= 1; for a record stream, the most
 *	records a datablock holds)
 * @handle: out: the template
 * @reserved: must be 0
 * @name: optional name for PTASK_IOC_LOOKUP ("" for none)
 */
struct ptask_template_open {
	__u32 size;
	__u32 flags;
	__u32 graph;
	__u32 kind;
	__u32 binding;
	__u32 stride;
	__u32 dims[3];
	__u32 handle;
	__u64 reserved;
	char name[PTASK_NAME_MAX];
};
#define PTASK_TEMPLATE_OPEN_SIZE_VER0	112

enum ptask_ptask_kind {
	PTASK_KIND_GPU = 0,
	PTASK_KIND_CPU = 1,
	__PTASK_KIND_MAX,
};

/* struct ptask_ptask_open.flags */
#define PTASK_PTASK_SELF		(1U << 0)	/* CPU: run by its creator */
#define PTASK_PTASK_FLAGS_ALL		PTASK_PTASK_SELF

/**
 * struct ptask_ptask_open - argument of PTASK_IOC_PTASK_OPEN
 * @size: sizeof(struct ptask_ptask_open)
 * @flags: PTASK_PTASK_SELF (CPU ptasks only)
 * @graph: the graph
 * @kind: enum ptask_ptask_kind
 * @nports: number of ports (1..PTASK_MAX_PORTS)
 * @handle: out: the ptask
 * @code: user pointer to PTX or cubin bytes (GPU only)
 * @code_len: bytes at @code
 * @reserved: must be 0
 * @entry: NUL-terminated kernel entry name (GPU only)
 * @name: optional name for PTASK_IOC_LOOKUP
 */
struct ptask_ptask_open {
	__u32 size;
	__u32 flags;
	__u32 graph;
	__u32 kind;
	__u32 nports;
	__u32 handle;
	__u64 code;
	__u32 code_len;
	__u32 reserved;
	char entry[PTASK_NAME_MAX];
	char name[PTASK_NAME_MAX];
};
#define PTASK_PTASK_OPEN_SIZE_VER0	168

enum ptask_port_kind {
	PTASK_PORT_INPUT = 0,
	PTASK_PORT_OUTPUT = 1,
	PTASK_PORT_STICKY = 2,
	__PTASK_PORT_KIND_MAX,
};

/* struct ptask_port_open.flags */
#define PTASK_PORT_RUNTIME		(1U << 0)
#define PTASK_PORT_INOUT		(1U << 1)
#define PTASK_PORT_FLAGS_ALL		(PTASK_PORT_RUNTIME | PTASK_PORT_INOUT)

/**
 * struct ptask_port_open - argument of PTASK_IOC_PORT_OPEN
 * @size: sizeof(struct ptask_port_open)
 * @flags: PTASK_PORT_*
 * @ptask: the ptask
 * @kind: enum ptask_port_kind
 * @template: 0 or a template of the ptask's graph
 * @param_index: formal parameter of the GPU code the port binds to
 * @inout_peer: with PTASK_PORT_INOUT on an input: the output port (handle)
 *	that emits the updated datablock; else 0
 * @handle: out: the port
 * @index: out: the port's number in its ptask
 * @reserved: must be 0
 * @name: optional name for PTASK_IOC_LOOKUP
 */
struct ptask_port_open {
	__u32 size;
	__u32 flags;
	__u32 ptask;
	__u32 kind;
	__u32 template;
	__u32 param_index;
	__u32 inout_peer;
	__u32 handle;
	__u32 index;
	__u32 reserved;
	char name[PTASK_NAME_MAX];
};
#define PTASK_PORT_OPEN_SIZE_VER0	104

/* struct ptask_channel_open.flags (see "Record-stream tunnels") */
#define PTASK_CHANNEL_TUNNEL		(1U << 0)
#define PTASK_CHANNEL_TUNNEL_SET	(1U << 1)
#define PTASK_CHANNEL_FLAGS_ALL \
	(PTASK_CHANNEL_TUNNEL | PTASK_CHANNEL_TUNNEL_SET)
/* A tunnel's defaults before an executor calibrates them, and limits. */
#define PTASK_TUNNEL_DEFAULT_BYTES	(256ULL << 10)
#define PTASK_TUNNEL_DEFAULT_TIMEOUT_NS	(200ULL * 1000)
#define PTASK_TUNNEL_MAX_TIMEOUT_NS	(1000ULL * 1000 * 1000)

/**
 * struct ptask_tunnel_head - the first bytes of a tunnel's batch
 * @records: records that follow
 * @stride: bytes per record (the input end's template's stride)
 * @reserved: 0
 */
struct ptask_tunnel_head {
	__u64 records;
	__u32 stride;
	__u32 reserved;
};
#define PTASK_TUNNEL_HEAD_BYTES		16

/**
 * struct ptask_channel_open - argument of PTASK_IOC_CHANNEL_OPEN
 * @size: sizeof(struct ptask_channel_open)
 * @flags: 0, PTASK_CHANNEL_TUNNEL, or PTASK_CHANNEL_TUNNEL_SET alone
 * @graph: the graph
 * @src: an output port, or 0 for a graph input
 * @dst: an input or sticky port, or 0 for a graph output
 * @capacity: datablocks the channel holds (1..PTASK_CHANNEL_MAX_CAPACITY)
 * @template: 0 or a template of the graph
 * @handle: out: the channel (in, with PTASK_CHANNEL_TUNNEL_SET)
 * @name: optional name for PTASK_IOC_LOOKUP
 * @tunnel_bytes: a tunnel input end's threshold in bytes (0: default)
 * @tunnel_timeout_ns: its timeout, relative (0: default)
 * @tunnel_records: its threshold in records (0: none)
 * @reserved: must be 0
 *
 * The tunnel fields came with PTASK_CHANNEL_OPEN_SIZE_VER1; a caller of
 * VER0 size gets a plain channel or the defaults.
 */
struct ptask_channel_open {
	__u32 size;
	__u32 flags;
	__u32 graph;
	__u32 src;
	__u32 dst;
	__u32 capacity;
	__u32 template;
	__u32 handle;
	char name[PTASK_NAME_MAX];
	__u64 tunnel_bytes;
	__u64 tunnel_timeout_ns;
	__u32 tunnel_records;
	__u32 reserved;
};
#define PTASK_CHANNEL_OPEN_SIZE_VER0	96
#define PTASK_CHANNEL_OPEN_SIZE_VER1	120

enum ptask_object_type {
	PTASK_OBJ_NONE = 0,
	PTASK_OBJ_GRAPH = 1,
	PTASK_OBJ_TEMPLATE = 2,
	PTASK_OBJ_PTASK = 3,
	PTASK_OBJ_PORT = 4,
	PTASK_OBJ_CHANNEL = 5,
	PTASK_OBJ_DATABLOCK = 6,
	__PTASK_OBJ_MAX,
};
/*
 * In events only (PTASK_EVENT_CREATED / _DESTROYED): a process's GPU
 * accounting record appeared or went away; the handle is its pid in the
 * initial pid namespace.
 */
#define PTASK_OBJ_PROCESS		16

/**
 * struct ptask_lookup - argument of PTASK_IOC_LOOKUP
 * @size: sizeof(struct ptask_lookup)
 * @flags: must be 0
 * @graph: the graph to search
 * @type: PTASK_OBJ_TEMPLATE, _PTASK, _PORT or _CHANNEL
 * @handle: out: the object
 * @reserved: must be 0
 * @name: the name to find
 */
struct ptask_lookup {
	__u32 size;
	__u32 flags;
	__u32 graph;
	__u32 type;
	__u32 handle;
	__u32 reserved;
	char name[PTASK_NAME_MAX];
};
#define PTASK_LOOKUP_SIZE_VER0		88

/* PTASK_IOC_DATABLOCK_CREATE flags */
#define PTASK_DATABLOCK_CREATE_OUTPUT	(1U << 0)	/* for @invocation */
#define PTASK_DATABLOCK_CREATE_FLAGS_ALL	PTASK_DATABLOCK_CREATE_OUTPUT

/**
 * struct ptask_datablock_create - argument of PTASK_IOC_DATABLOCK_CREATE
 * @size: sizeof(struct ptask_datablock_create)
 * @flags: 0 or PTASK_DATABLOCK_CREATE_OUTPUT (executors only)
 * @template: 0, or the template the datablock is made from
 * @handle: out: the datablock
 * @bytes: in: the size when @template is 0, else 0 (the template sizes
 *	it); out: the size
 * @records: records it holds (a record stream's count; else informative)
 * @mmap_offset: out: offset to mmap it at
 * @invocation: with PTASK_DATABLOCK_CREATE_OUTPUT, the id of the taken
 *	invocation it is an output of (its owner pays); else 0
 *	(PTASK_DATABLOCK_CREATE_SIZE_VER1)
 */
struct ptask_datablock_create {
	__u32 size;
	__u32 flags;
	__u32 template;
	__u32 handle;
	__u64 bytes;
	__u64 records;
	__u64 mmap_offset;
	__u64 invocation;
};
#define PTASK_DATABLOCK_CREATE_SIZE_VER0	40
#define PTASK_DATABLOCK_CREATE_SIZE_VER1	48

/**
 * struct ptask_datablock_release - argument of PTASK_IOC_DATABLOCK_RELEASE
 * @size: sizeof(struct ptask_datablock_release)
 * @flags: must be 0
 * @handle: the datablock
 * @reserved: must be 0
 */
struct ptask_datablock_release {
	__u32 size;
	__u32 flags;
	__u32 handle;
	__u32 reserved;
};
#define PTASK_DATABLOCK_RELEASE_SIZE_VER0	16

/* struct ptask_push.flags */
#define PTASK_PUSH_SET_RECORDS		(1U << 1)
#define PTASK_PUSH_FLAGS_ALL		(PTASK_NONBLOCK | PTASK_PUSH_SET_RECORDS)

/**
 * struct ptask_push - argument of PTASK_IOC_PUSH
 * @size: sizeof(struct ptask_push)
 * @flags: PTASK_NONBLOCK, PTASK_PUSH_SET_RECORDS
 * @channel: a graph input channel
 * @datablock: a datablock the caller holds
 * @records: the record count to set with PTASK_PUSH_SET_RECORDS
 * @timeout_ns: absolute CLOCK_MONOTONIC deadline, 0 for none
 */
struct ptask_push {
	__u32 size;
	__u32 flags;
	__u32 channel;
	__u32 datablock;
	__u64 records;
	__u64 timeout_ns;
};
#define PTASK_PUSH_SIZE_VER0		32

/* struct ptask_pull.flags: PTASK_PULL_SLICE: see "Record-stream tunnels" */
#define PTASK_PULL_SLICE		(1U << 1)
#define PTASK_PULL_FLAGS_ALL		(PTASK_NONBLOCK | PTASK_PULL_SLICE)

/**
 * struct ptask_pull - argument of PTASK_IOC_PULL
 * @size: sizeof(struct ptask_pull)
 * @flags: PTASK_NONBLOCK, PTASK_PULL_SLICE
 * @channel: a graph output channel
 * @datablock: out: the datablock (the caller now holds a reference); in,
 *	with PTASK_PULL_SLICE: the ticket (the datablock pushed)
 * @timeout_ns: absolute CLOCK_MONOTONIC deadline, 0 for none
 * @mmap_offset: out: where to mmap it
 * @bytes: out: its size
 * @records: out: its record count
 */
struct ptask_pull {
	__u32 size;
	__u32 flags;
	__u32 channel;
	__u32 datablock;
	__u64 timeout_ns;
	__u64 mmap_offset;
	__u64 bytes;
	__u64 records;
};
#define PTASK_PULL_SIZE_VER0		48

/**
 * struct ptask_graph_ctl - argument of PTASK_IOC_GRAPH_RUN and _TERMINATE
 * @size: sizeof(struct ptask_graph_ctl)
 * @flags: must be 0
 * @graph: the graph
 * @reserved: must be 0
 */
struct ptask_graph_ctl {
	__u32 size;
	__u32 flags;
	__u32 graph;
	__u32 reserved;
};
#define PTASK_GRAPH_CTL_SIZE_VER0	16

/* struct ptask_priority.flags */
#define PTASK_PRIO_SET_STATIC		(1U << 0)
#define PTASK_PRIO_SET_PROXY		(1U << 1)
#define PTASK_PRIO_FLAGS_ALL		(PTASK_PRIO_SET_STATIC | PTASK_PRIO_SET_PROXY)

/**
 * struct ptask_priority - argument of PTASK_IOC_PTASK_SET_PRIORITY
 * @size: sizeof(struct ptask_priority)
 * @flags: PTASK_PRIO_SET_* (at least one)
 * @ptask: the ptask
 * @static_prio: PTASK_PRIO_MIN..PTASK_PRIO_MAX
 * @proxy_nice: -20..19
 * @reserved: must be 0
 */
struct ptask_priority {
	__u32 size;
	__u32 flags;
	__u32 ptask;
	__u32 static_prio;
	__s32 proxy_nice;
	__u32 reserved;
};
#define PTASK_PRIORITY_SIZE_VER0	24

/**
 * struct ptask_geometry - argument of PTASK_IOC_PTASK_SET_GEOMETRY
 * @size: sizeof(struct ptask_geometry)
 * @flags: must be 0
 * @ptask: a GPU ptask
 * @shared_bytes: dynamic shared memory per block
 * @grid: blocks in x, y, z
 * @block: threads per block in x, y, z
 */
struct ptask_geometry {
	__u32 size;
	__u32 flags;
	__u32 ptask;
	__u32 shared_bytes;
	__u32 grid[3];
	__u32 block[3];
};
#define PTASK_GEOMETRY_SIZE_VER0	40

/**
 * struct ptask_invocation - one queued invocation, filled by EXEC_TAKE
 * @id: the invocation, for EXEC_COMPLETE
 * @ptask: the ptask handle (EXEC_PTASK_INFO gives its code)
 * @graph: its graph
 * @kind: enum ptask_ptask_kind
 * @owner_pid: the process that created the ptask: its tgid in the
 *	initial pid namespace, whatever namespace it runs in (in user mode:
 *	as ptaskd's SO_PEERCRED gives it)
 * @owner_uid: its euid
 * @static_prio: the ptask's static priority
 * @proxy_nice: the ptask's proxy priority (a nice value)
 * @first_port: index of its first record in the ports array
 * @n_ports: records it has there, one per port of the ptask
 * @flags: PTASK_INV_* (below; an older module leaves it 0)
 * @queued_ns: CLOCK_MONOTONIC time it was queued
 */
struct ptask_invocation {
	__u64 id;
	__u32 ptask;
	__u32 graph;
	__u32 kind;
	__s32 owner_pid;
	__u32 owner_uid;
	__u32 static_prio;
	__s32 proxy_nice;
	__u32 first_port;
	__u32 n_ports;
	__u32 flags;
	__u64 queued_ns;
};

/*
 * struct ptask_invocation.flags: PTASK_INV_BACKLOG: when it was taken,
 * its ptask's inputs already held the next invocation's, which becomes
 * ready as soon as this one completes (or completes ahead: an executor
 * running many invocations of one ptask back to back completes them
 * ahead, see PTASK_IOC_EXEC_COMPLETE).
 */
#define PTASK_INV_BACKLOG		(1U << 0)
/*
 * PTASK_INV_AHEAD (PTASK_TAKE_AHEAD only): the core completed it ahead
 * already, with output datablocks of its own making, named in the output
 * port records: the executor writes them and owes it only the settle.
 */
#define PTASK_INV_AHEAD			(1U << 1)
/*
 * PTASK_INV_SEGMENT (PTASK_TAKE_FUSE only): the invocation runs a
 * segment of GPU ptasks, its port records those of each in turn
 * (struct ptask_invocation_port.member says whose).
 */
#define PTASK_INV_SEGMENT		(1U << 2)

/**
 * struct ptask_invocation_port - one port of a taken invocation
 * @port: the port handle
 * @index: its number in the ptask
 * @kind: enum ptask_port_kind
 * @flags: PTASK_PORT_* of the port, PTASK_INVP_TO_CLIENT and the binding
 * @template: its template (0 for none)
 * @param_index: formal parameter it binds to
 * @datablock: input: the datablock; output: 0, or with PTASK_INV_AHEAD
 *	the datablock the core made for it
 * @generation: input: the datablock's generation, bumped by every
 *	PTASK_IOC_PUSH and DATABLOCK_CREATE of it (a client may have written
 *	its bytes since): a copy an executor keeps of it (on a device) is
 *	current only while the generation is the one it copied; outputs
 *	the executor emits keep their generation.  Output: 0
 * @mmap_offset: input: where the executor maps it
 * @bytes: input: its size; output: the template's size (0 if none)
 * @records: input: its record count
 * @peer: a PTASK_PORT_INOUT input: the index of the output port that
 *	emits it (its datablock, updated in place); else PTASK_INVP_NO_PEER
 * @member: in a segment's records (PTASK_INV_SEGMENT), the ptask whose
 *	port this is; 0 in other invocations' records
 */
struct ptask_invocation_port {
	__u32 port;
	__u32 index;
	__u32 kind;
	__u32 flags;
	__u32 template;
	__u32 param_index;
	__u32 datablock;
	__u32 generation;
	__u64 mmap_offset;
	__u64 bytes;
	__u64 records;
	__u32 peer;
	__u32 member;
};
#define PTASK_INVP_NO_PEER		0xffffffffU

/*
 * struct ptask_invocation_port.flags, beyond the port's PTASK_PORT_*:
 * an output port with a channel to a graph output or to a CPU ptask
 * (host code will read what it emits, so an executor must leave the
 * bytes in host memory).
 */
#define PTASK_INVP_TO_CLIENT		(1U << 16)
/*
 * ... and, on such an output, that every channel it feeds is a graph
 * output: only clients read it, by pulls, which wait for the settle of
 * an invocation completed ahead (PTASK_IOC_EXEC_COMPLETE).
 */
#define PTASK_INVP_PULLED_ONLY		(1U << 19)
/*
 * ... and on an input, that its datablock is an output the core made for
 * an invocation it completed ahead as it was taken (PTASK_TAKE_AHEAD) and
 * that has not settled: the executor orders this read behind that
 * invocation's work (whose output port record names the same datablock),
 * even when that invocation reaches it in a later take.
 */
#define PTASK_INVP_PENDING		(1U << 20)
/*
 * ... and, in a segment (PTASK_INV_SEGMENT), that the port is one end of
 * a link between two of its ptasks: no datablock; the output's @bytes is
 * the intermediate's size, which the executor keeps where the next
 * ptask's launch reads it.
 */
#define PTASK_INVP_FUSED		(1U << 21)
/*
 * ... and on an output, that the core made its datablock as it was taken
 * (PTASK_TAKE_OUTPUTS): @datablock names it, the invocation holds it.
 */
#define PTASK_INVP_MADE			(1U << 22)
/*
 * ... and the binding of the port's template (enum ptask_binding; GLOBAL
 * when the port has no template), so an executor knows which datablocks
 * are kernel parameters passed by value: PTASK_INVP_BINDING(flags).
 */
#define PTASK_INVP_BIND_SHIFT		17
#define PTASK_INVP_BIND_MASK		(3U << PTASK_INVP_BIND_SHIFT)
#define PTASK_INVP_BINDING(flags)	(((flags) & PTASK_INVP_BIND_MASK) >> \
					 PTASK_INVP_BIND_SHIFT)

/**
 * struct ptask_exec_take - argument of PTASK_IOC_EXEC_TAKE
 * @size: sizeof(struct ptask_exec_take)
 * @flags: PTASK_NONBLOCK, PTASK_TAKE_SELF, PTASK_TAKE_AHEAD,
 *	PTASK_TAKE_FUSE
 * @max_invocations: entries at @invocations (>= 1)
 * @max_ports: entries at @ports (>= 1)
 * @invocations: user array of struct ptask_invocation
 * @ports: user array of struct ptask_invocation_port
 * @timeout_ns: absolute CLOCK_MONOTONIC deadline, 0 for none
 * @n_invocations: out: invocations taken
 * @n_ports: out: port records written
 * @policy: out: the ordering policy the administrator set for executors
 *	(enum ptask_policy; PTASK_POLICY_DEFAULT: the executor's own)
 * @forgotten: out: datablock death notices waiting for the caller
 *	(PTASK_IOC_EXEC_FORGOTTEN); 0 from a kernel older than the notices
 *
 * With GPU budgets on (PTSched, sysfs "budgets"), a GPU ptask whose owner
 * process has a negative budget stays Queued and is not taken: budgets
 * decide which ptasks are eligible, the executor's policy orders those it
 * took.
 */
struct ptask_exec_take {
	__u32 size;
	__u32 flags;
	__u32 max_invocations;
	__u32 max_ports;
	__u64 invocations;
	__u64 ports;
	__u64 timeout_ns;
	__u32 n_invocations;
	__u32 n_ports;
	__u32 policy;
	__u32 forgotten;
};
#define PTASK_EXEC_TAKE_SIZE_VER0	48
#define PTASK_EXEC_TAKE_SIZE_VER1	56

/**
 * enum ptask_policy - how an executor orders the invocations it took
 * @PTASK_POLICY_DEFAULT: the executor's own choice (its command line)
 * @PTASK_POLICY_FIRST_AVAILABLE: any free accelerator, no queue order
 * @PTASK_POLICY_FIFO: in queueing order
 * @PTASK_POLICY_PRIORITY: by effective priority (static, proxy, waits)
 * @PTASK_POLICY_DATA_AWARE: priority, preferring where the inputs are
 */
enum ptask_policy {
	PTASK_POLICY_DEFAULT = 0,
	PTASK_POLICY_FIRST_AVAILABLE = 1,
	PTASK_POLICY_FIFO = 2,
	PTASK_POLICY_PRIORITY = 3,
	PTASK_POLICY_DATA_AWARE = 4,
	__PTASK_POLICY_MAX,
};
#define PTASK_POLICY_NAMES { "default", "first-available", "fifo", \
	"priority", "data-aware" }

/**
 * struct ptask_exec_output - one output of a completed invocation
 * @index: the output port's number in the ptask
 * @datablock: the datablock to emit on it
 */
struct ptask_exec_output {
	__u32 index;
	__u32 datablock;
};

/**
 * struct ptask_exec_complete - argument of PTASK_IOC_EXEC_COMPLETE
 * @size: sizeof(struct ptask_exec_complete)
 * @flags: 0, PTASK_EXEC_COMPLETE_AHEAD, _SETTLE or _REQUEUE
 * @id: the invocation
 * @status: 0, or a negative errno that fails the graph
 * @n_outputs: entries at @outputs
 * @gpu_ns: accelerator time the invocation used (measured with device
 *	events); charged to the owner process's GPU budget
 * @outputs: user array of struct ptask_exec_output
 * @accel: the accelerator it ran on: its PTASK_ACCEL_A_INDEX + 1, or 0
 *	when not known (shown by the admin tools)
 * @error_code: with a negative @status, the accelerator's own code for
 *	what failed (ptaskd's cuda backend: the CUresult, e.g. 700 for an
 *	illegal address), or 0; kept as the ptask's last error for the
 *	admin tools (PTASK_A_OBJ_ERROR_CODE).  With @status 0 it must be 0
 *	(-EINVAL).  Older headers called it @reserved, always 0.
 */
struct ptask_exec_complete {
	__u32 size;
	__u32 flags;
	__u64 id;
	__s32 status;
	__u32 n_outputs;
	__u64 gpu_ns;
	__u64 outputs;
	__u32 accel;
	__u32 error_code;
};
#define PTASK_EXEC_COMPLETE_SIZE_VER0	40
#define PTASK_EXEC_COMPLETE_SIZE_VER1	48

/*
 * struct ptask_exec_complete.flags (chains ahead, issue 12; see
 * PTASK_IOC_EXEC_COMPLETE above): AHEAD completes an invocation whose
 * work is queued on a device but not done, so its outputs move on to
 * the GPU ptasks downstream at once; SETTLE later gives its status and
 * device time.
 */
#define PTASK_EXEC_COMPLETE_AHEAD	(1U << 0)
#define PTASK_EXEC_COMPLETE_SETTLE	(1U << 1)
/*
 * REQUEUE (issue 13, faults contained): the invocation was lost to no
 * fault of its own (its accelerator was reset under it: NVIDIA MPS
 * resets every client when one faults), with a negative @status saying
 * how, no outputs.  The core queues it again as it was taken, to run
 * before the ptask's next one, its inputs as they are in host memory;
 * the clients see a delay, not an error.  It cannot be re-run, and fails
 * its graph with @status as a plain failure does, when it wrote an input
 * in place (an in/out port: the bytes may be half-written), when it was
 * a segment or completed ahead, or when an input is current only on the
 * executor's device.  Returns 0 either way.
 */
#define PTASK_EXEC_COMPLETE_REQUEUE	(1U << 2)
#define PTASK_EXEC_COMPLETE_FLAGS_ALL	(PTASK_EXEC_COMPLETE_AHEAD | \
					 PTASK_EXEC_COMPLETE_SETTLE | \
					 PTASK_EXEC_COMPLETE_REQUEUE)

/**
 * struct ptask_exec_ptask_info - argument of PTASK_IOC_EXEC_PTASK_INFO
 * @size: sizeof(struct ptask_exec_ptask_info)
 * @flags: must be 0
 * @ptask: the ptask
 * @kind: out: enum ptask_ptask_kind
 * @nports: out: its number of ports
 * @code_len: in: bytes at @code; out: the code's size
 * @code: user buffer for the code (may be 0 to ask the size)
 * @shared_bytes: out: dynamic shared memory per block
 * @grid: out: blocks (all 0: infer)
 * @block: out: threads per block
 * @reserved: must be 0
 * @entry: out: the entry name
 */
struct ptask_exec_ptask_info {
	__u32 size;
	__u32 flags;
	__u32 ptask;
	__u32 kind;
	__u32 nports;
	__u32 code_len;
	__u64 code;
	__u32 shared_bytes;
	__u32 grid[3];
	__u32 block[3];
	__u32 reserved;
	char entry[PTASK_NAME_MAX];
};
#define PTASK_EXEC_PTASK_INFO_SIZE_VER0	128

/*
 * Death notices an executor's queue holds before it drops them: the
 * handles of dead datablocks it was handed and of dead ptasks whose info
 * it read (EXEC_PTASK_INFO).
 */
#define PTASK_FORGOTTEN_MAX		4096

/**
 * struct ptask_exec_forgotten - argument of PTASK_IOC_EXEC_FORGOTTEN
 * @size: sizeof(struct ptask_exec_forgotten)
 * @flags: must be 0
 * @max_handles: entries at @handles (>= 1; more than PTASK_FORGOTTEN_MAX
 *	is PTASK_FORGOTTEN_MAX)
 * @n_handles: out: handles written
 * @handles: user array of __u32
 * @lost: out: notices dropped (queue full) since the last call
 * @pending: out: notices still waiting
 */
struct ptask_exec_forgotten {
	__u32 size;
	__u32 flags;
	__u32 max_handles;
	__u32 n_handles;
	__u64 handles;
	__u32 lost;
	__u32 pending;
};
#define PTASK_EXEC_FORGOTTEN_SIZE_VER0	32

#define PTASK_IOC_MAGIC			0xB7

#define PTASK_IOC_GRAPH_OPEN		_IOWR(PTASK_IOC_MAGIC, 0x01, struct ptask_graph_open)
#define PTASK_IOC_TEMPLATE_OPEN		_IOWR(PTASK_IOC_MAGIC, 0x02, struct ptask_template_open)
#define PTASK_IOC_PTASK_OPEN		_IOWR(PTASK_IOC_MAGIC, 0x03, struct ptask_ptask_open)
#define PTASK_IOC_PORT_OPEN		_IOWR(PTASK_IOC_MAGIC, 0x04, struct ptask_port_open)
#define PTASK_IOC_CHANNEL_OPEN		_IOWR(PTASK_IOC_MAGIC, 0x05, struct ptask_channel_open)
#define PTASK_IOC_LOOKUP		_IOWR(PTASK_IOC_MAGIC, 0x06, struct ptask_lookup)
#define PTASK_IOC_DATABLOCK_CREATE	_IOWR(PTASK_IOC_MAGIC, 0x07, struct ptask_datablock_create)
#define PTASK_IOC_DATABLOCK_RELEASE	_IOW(PTASK_IOC_MAGIC, 0x08, struct ptask_datablock_release)
#define PTASK_IOC_PUSH			_IOW(PTASK_IOC_MAGIC, 0x09, struct ptask_push)
#define PTASK_IOC_PULL			_IOWR(PTASK_IOC_MAGIC, 0x0a, struct ptask_pull)
#define PTASK_IOC_GRAPH_RUN		_IOW(PTASK_IOC_MAGIC, 0x0b, struct ptask_graph_ctl)
#define PTASK_IOC_GRAPH_TERMINATE	_IOW(PTASK_IOC_MAGIC, 0x0c, struct ptask_graph_ctl)
#define PTASK_IOC_GRAPH_CLOSE		_IOW(PTASK_IOC_MAGIC, 0x0f, struct ptask_graph_ctl)
#define PTASK_IOC_PTASK_SET_PRIORITY	_IOW(PTASK_IOC_MAGIC, 0x0d, struct ptask_priority)
#define PTASK_IOC_PTASK_SET_GEOMETRY	_IOW(PTASK_IOC_MAGIC, 0x0e, struct ptask_geometry)
#define PTASK_IOC_EXEC_TAKE		_IOWR(PTASK_IOC_MAGIC, 0x40, struct ptask_exec_take)
#define PTASK_IOC_EXEC_COMPLETE		_IOW(PTASK_IOC_MAGIC, 0x41, struct ptask_exec_complete)
#define PTASK_IOC_EXEC_PTASK_INFO	_IOWR(PTASK_IOC_MAGIC, 0x42, struct ptask_exec_ptask_info)
#define PTASK_IOC_EXEC_FORGOTTEN	_IOWR(PTASK_IOC_MAGIC, 0x43, struct ptask_exec_forgotten)

/*
 * ======================================================================
 * Generic netlink: family PTASK_GENL_NAME, version PTASK_GENL_VERSION
 * ======================================================================
 *
 * Permissions: an "admin" command needs CAP_NET_ADMIN in the initial user
 * namespace (GENL_ADMIN_PERM): the genetlink core checks it before it
 * validates the attributes, runs the command or starts the dump, and
 * refuses with -EPERM as the ack of the request (for a dump too: an
 * NLMSG_ERROR, not an NLMSG_DONE).  EXEC_REGISTER needs CAP_SYS_ADMIN as
 * well, checked after validation.  The family lives in the initial network
 * namespace only.
 *
 * PTASK_CMD_EXEC_REGISTER (do; admin and CAP_SYS_ADMIN)
 *	Make the /dev/ptask fd PTASK_A_EXEC_FD of the sending process an
 *	executor, with its accelerator inventory PTASK_A_ACCELS (nested: one
 *	PTASK_A_ACCEL nest per device, PTASK_ACCEL_A_*).  Several executors
 *	may be registered; queued invocations go to whichever takes them
 *	first.  With PTASK_A_OBJ_OWNER_UID (u32, a uid of the initial user
 *	namespace) it is that uid's executor: it takes the invocations of
 *	ptasks that uid owns alone, and no executor without a uid takes
 *	them while it is registered (Documentation/uapi.md, "Executors per
 *	uid").  Errors: -EPERM (no CAP_NET_ADMIN; after validation, no
 *	CAP_SYS_ADMIN), -EINVAL (missing fd attribute), -EBADF (not a
 *	/dev/ptask fd), -EALREADY, -E2BIG (over PTASK_MAX_ACCELS devices).
 *
 * PTASK_CMD_EXEC_UNREGISTER (do; admin)
 *	Drop the executor role of fd PTASK_A_EXEC_FD; invocations it took and
 *	did not complete fail their graphs with -EIO, and so do the running
 *	graphs still holding a datablock it completed for GPU ptasks alone
 *	to read (an output, an input written in place): its only current
 *	copy may have been in the executor's device memory (another
 *	executor never takes an invocation reading one).  Closing the fd
 *	does the same.  Errors: -EPERM, -EINVAL, -EBADF, -ENOENT (not an
 *	executor).
 *
 * Attributes are validated strictly (unknown attributes, and nests
 * without NLA_F_NESTED, are -EINVAL).
 *
 * PTASK_CMD_GET_INFO (do)
 *	Reply: PTASK_A_ABI_VERSION, PTASK_A_EXECUTORS (u32 count) and
 *	PTASK_A_COUNTS (nest of u64, one per enum ptask_count).
 *
 * PTASK_CMD_GET_OBJECT (dump; admin)
 *	One message per object: PTASK_A_OBJ_TYPE, _HANDLE, _GRAPH, _NAME,
 *	_STATE, _OWNER_UID, _OWNER_PID; ptasks add _KIND, _PRIO,
 *	_PROXY_NICE, _ACCEL, _GPU_NS, _INVOCATIONS.  For the admin tool.
 *	_OWNER_PID is a pid in the initial pid namespace.
 *
 * PTASK_CMD_GET_SCHED (do)
 *	Reply: PTASK_A_SCHED_* (every field of struct ptask_sched_params).
 *
 * PTASK_CMD_SET_SCHED (do; admin)
 *	Any of PTASK_A_SCHED_BUDGETS, _ALPHA, _POLICY, _TIMER_US,
 *	_WINDOW_MS; all checked before any is applied.  Errors: -EPERM,
 *	-EINVAL (none given, or a value out of range; see
 *	PTASK_SCHED_*_MIN/_MAX).
 *
 * PTASK_CMD_GET_PROC (dump)
 *	One message per process with GPU accounting, in pid order:
 *	PTASK_A_PROC_* (every field of struct ptask_proc_info).  The pid is
 *	the process's pid in the initial pid namespace.
 *
 * PTASK_CMD_SET_PRIO (do; admin)
 *	Either PTASK_A_OBJ_HANDLE and PTASK_A_OBJ_PRIO (a ptask's static
 *	priority, 0..99) or PTASK_A_PROC_PID and PTASK_A_PROC_WEIGHT (a
 *	process's weight override, 0 clears it; the pid in the initial pid
 *	namespace).  Errors: -EPERM, -EINVAL, -ENOENT (no such ptask),
 *	-ESRCH (no accounting for that pid).
 *
 * Multicast group PTASK_GENL_MCGRP_EVENTS: PTASK_CMD_EVENT messages with
 * PTASK_A_EVENT (enum ptask_event), PTASK_A_OBJ_TYPE and PTASK_A_OBJ_HANDLE.
 * Joining it needs CAP_SYS_ADMIN (-EPERM): events name every user's
 * objects.
 */
#define PTASK_GENL_NAME			"ptask"
#define PTASK_GENL_VERSION		1
#define PTASK_GENL_MCGRP_EVENTS		"events"
#define PTASK_MAX_ACCELS		64

enum ptask_genl_cmd {
	PTASK_CMD_UNSPEC,
	PTASK_CMD_EXEC_REGISTER,
	PTASK_CMD_EXEC_UNREGISTER,
	PTASK_CMD_GET_INFO,
	PTASK_CMD_GET_OBJECT,
	PTASK_CMD_EVENT,
	PTASK_CMD_GET_SCHED,
	PTASK_CMD_SET_SCHED,
	PTASK_CMD_GET_PROC,
	PTASK_CMD_SET_PRIO,
	__PTASK_CMD_MAX,
};
#define PTASK_CMD_MAX (__PTASK_CMD_MAX - 1)

enum ptask_genl_attr {
	PTASK_A_UNSPEC,
	PTASK_A_EXEC_FD,		/* u32 */
	PTASK_A_ACCELS,			/* nest of PTASK_A_ACCEL */
	PTASK_A_ACCEL,			/* nest of PTASK_ACCEL_A_* */
	PTASK_A_ABI_VERSION,		/* u32 */
	PTASK_A_EXECUTORS,		/* u32 */
	PTASK_A_COUNTS,			/* nest: u64 per enum ptask_count, type = count + 1 */
	PTASK_A_OBJ_TYPE,		/* u32, enum ptask_object_type */
	PTASK_A_OBJ_HANDLE,		/* u32 */
	PTASK_A_OBJ_GRAPH,		/* u32 */
	PTASK_A_OBJ_NAME,		/* string */
	PTASK_A_OBJ_STATE,		/* u32 */
	PTASK_A_OBJ_OWNER_UID,		/* u32 */
	PTASK_A_OBJ_OWNER_PID,		/* u32 */
	PTASK_A_EVENT,			/* u32, enum ptask_event */
	PTASK_A_PAD,
	/* ptasks in GET_OBJECT; PRIO also in SET_PRIO */
	PTASK_A_OBJ_KIND,		/* u32, enum ptask_ptask_kind */
	PTASK_A_OBJ_PRIO,		/* u32, static priority */
	PTASK_A_OBJ_PROXY_NICE,		/* s32 */
	PTASK_A_OBJ_ACCEL,		/* u32, accelerator index + 1, 0: none */
	PTASK_A_OBJ_GPU_NS,		/* u64 */
	PTASK_A_OBJ_INVOCATIONS,	/* u64 */
	/* GET_SCHED / SET_SCHED: struct ptask_sched_params */
	PTASK_A_SCHED_BUDGETS,		/* u32, 0 or 1 */
	PTASK_A_SCHED_ALPHA,		/* u32, permille */
	PTASK_A_SCHED_POLICY,		/* u32, enum ptask_policy */
	PTASK_A_SCHED_TIMER_US,		/* u32 */
	PTASK_A_SCHED_WINDOW_MS,	/* u32 */
	PTASK_A_SCHED_PERIOD_NS,	/* u64, out */
	PTASK_A_SCHED_ACTIVE,		/* u32, out */
	PTASK_A_SCHED_HELD,		/* u32, out */
	PTASK_A_SCHED_N_ACCELS,		/* u32, out */
	PTASK_A_SCHED_TOTAL_WEIGHT,	/* u64, out */
	/* GET_PROC (one message per process), SET_PRIO: struct ptask_proc_info */
	PTASK_A_PROC_PID,		/* s32 */
	PTASK_A_PROC_UID,		/* u32 */
	PTASK_A_PROC_NICE,		/* s32 */
	PTASK_A_PROC_WEIGHT,		/* u32; SET_PRIO: the override, 0 clears */
	PTASK_A_PROC_WEIGHT_OVERRIDE,	/* u32 */
	PTASK_A_PROC_ACTIVE,		/* u32 */
	PTASK_A_PROC_HELD,		/* u32 */
	PTASK_A_PROC_QUEUED,		/* u32 */
	PTASK_A_PROC_RUNNING,		/* u32 */
	PTASK_A_PROC_PTASKS,		/* u32 */
	PTASK_A_PROC_BUDGET_NS,		/* s64 */
	PTASK_A_PROC_BMAX_NS,		/* s64 */
	PTASK_A_PROC_GPU_NS,		/* u64 */
	PTASK_A_PROC_AVG_NS,		/* u64 */
	PTASK_A_PROC_INVOCATIONS,	/* u64 */
	PTASK_A_PROC_HELD_NS,		/* u64 */
	/* ptasks in GET_OBJECT: failed invocations, the last one's errors */
	PTASK_A_OBJ_FAILURES,		/* u64 */
	PTASK_A_OBJ_LAST_ERROR,		/* s32, a negative errno; 0: none */
	PTASK_A_OBJ_ERROR_CODE,		/* u32, struct ptask_exec_complete's */
	__PTASK_A_MAX,
};
#define PTASK_A_MAX (__PTASK_A_MAX - 1)

enum ptask_accel_attr {
	PTASK_ACCEL_A_UNSPEC,
	PTASK_ACCEL_A_INDEX,		/* u32 */
	PTASK_ACCEL_A_NAME,		/* string, < PTASK_NAME_MAX */
	PTASK_ACCEL_A_KIND,		/* u32: enum ptask_accel_kind */
	PTASK_ACCEL_A_MEMORY,		/* u64 bytes */
	PTASK_ACCEL_A_CORES,		/* u32 */
	PTASK_ACCEL_A_CORE_KHZ,		/* u32 */
	PTASK_ACCEL_A_MEM_KHZ,		/* u32 */
	PTASK_ACCEL_A_PAD,
	__PTASK_ACCEL_A_MAX,
};
#define PTASK_ACCEL_A_MAX (__PTASK_ACCEL_A_MAX - 1)

enum ptask_accel_kind {
	PTASK_ACCEL_CUDA = 0,
	PTASK_ACCEL_CPU = 1,
	PTASK_ACCEL_SIM = 2,
	PTASK_ACCEL_TEST = 3,
	__PTASK_ACCEL_KIND_MAX,
};

enum ptask_event {
	PTASK_EVENT_CREATED = 1,
	PTASK_EVENT_DESTROYED = 2,
	PTASK_EVENT_GRAPH_RUN = 3,
	PTASK_EVENT_GRAPH_TERMINATED = 4,
	PTASK_EVENT_GRAPH_FAILED = 5,
	PTASK_EVENT_EXECUTOR_UP = 6,
	PTASK_EVENT_EXECUTOR_DOWN = 7,
};

/* Object states as PTASK_A_OBJ_STATE reports them. */
enum ptask_graph_state {
	PTASK_GRAPH_BUILDING = 0,
	PTASK_GRAPH_RUNNING = 1,
	PTASK_GRAPH_TERMINATED = 2,
	PTASK_GRAPH_FAILED = 3,
};

enum ptask_ptask_state {
	PTASK_STATE_WAITING = 0,
	PTASK_STATE_QUEUED = 1,
	PTASK_STATE_EXECUTING = 2,
	PTASK_STATE_COMPLETED = 3,
};

/*
 * ======================================================================
 * sysfs: /sys/kernel/ptask/
 * ======================================================================
 *
 * abi_version		(r) PTASK_ABI_VERSION
 * executors		(r) registered executors
 * objects/<count>	(r) live objects of each kind, one file per enum
 *			    ptask_count, named as PTASK_COUNT_NAMES lists;
 *			    "invocations" counts those taken by an executor
 *			    and not yet completed (queued ptasks are not
 *			    invocations yet)
 */
enum ptask_count {
	PTASK_COUNT_CLIENTS,
	PTASK_COUNT_GRAPHS,
	PTASK_COUNT_TEMPLATES,
	PTASK_COUNT_PTASKS,
	PTASK_COUNT_PORTS,
	PTASK_COUNT_CHANNELS,
	PTASK_COUNT_DATABLOCKS,
	PTASK_COUNT_INVOCATIONS,
	PTASK_COUNT_BUFFERS,		/* datablock memory, incl. still mapped */
	__PTASK_COUNT_MAX,
};

#define PTASK_COUNT_NAMES { "clients", "graphs", "templates", "ptasks", \
	"ports", "channels", "datablocks", "invocations", "buffers" }

#define PTASK_SYSFS_DIR			"/sys/kernel/ptask"

/*
 * ======================================================================
 * PTSched: per-process GPU budgets (Documentation/ptsched.md)
 * ======================================================================
 *
 * Every process that owns a GPU ptask has an accounting record: its weight
 * (the CFS weight of its nice value, or an administrator's override), its
 * budget B_p in ns and the GPU time its invocations used.  The set P of
 * processes "using a GPU" holds those with a GPU ptask Queued or
 * Executing, or with one within the last window_ms.  Executors report
 * each invocation's GPU time t (struct ptask_exec_complete.gpu_ns), which
 * is taken from B_p.  Once per period T = max(alpha * min t_i, timer_us)
 * (t_i: the running average of process i's invocations) every p in P
 * regains q_p = T * n_accels * w_p / sum w_i, capped at
 * B_max,p = max(w_p / sum w_i * sum t_i, q_p).  While budgets are on, a GPU
 * ptask whose process has B_p < 0 stays Queued.  A process that leaves P
 * keeps a positive budget and is forgiven a negative one.
 *
 * Kernel mode: /sys/kernel/ptask/sched/ and generic netlink; user mode
 * (ptaskd): the same settings through its socket (ptaskctl sched).
 */

/**
 * struct ptask_sched_params - the scheduler's settings and state
 * @budgets: 1: budgets decide eligibility; 0: off (still accounted)
 * @alpha_permille: alpha * 1000, 1..1000
 * @policy: enum ptask_policy, handed to executors with every take
 * @timer_us: the shortest period and timer step, 10..1000000
 * @window_ms: how long a process stays in P after its last GPU work,
 *	1..600000
 * @active: out: processes in P
 * @held: out: processes in P held by a negative budget with work queued
 * @n_accels: out: accelerators of the registered executors (at least 1)
 * @period_ns: out: the current period T
 * @total_weight: out: sum of the weights of P
 */
struct ptask_sched_params {
	__u32 budgets;
	__u32 alpha_permille;
	__u32 policy;
	__u32 timer_us;
	__u32 window_ms;
	__u32 active;
	__u32 held;
	__u32 n_accels;
	__u64 period_ns;
	__u64 total_weight;
};

#define PTASK_SCHED_ALPHA_MIN		1
#define PTASK_SCHED_ALPHA_MAX		1000
#define PTASK_SCHED_ALPHA_DEFAULT	500
#define PTASK_SCHED_TIMER_MIN_US	10
#define PTASK_SCHED_TIMER_MAX_US	1000000
#define PTASK_SCHED_TIMER_DEFAULT_US	100
#define PTASK_SCHED_WINDOW_MIN_MS	1
#define PTASK_SCHED_WINDOW_MAX_MS	600000
#define PTASK_SCHED_WINDOW_DEFAULT_MS	100
/* A weight override: 0 clears it; otherwise 1..PTASK_WEIGHT_MAX. */
#define PTASK_WEIGHT_MAX		1000000

/* Which fields of struct ptask_sched_params a set call changes. */
#define PTASK_SCHED_SET_BUDGETS		(1U << 0)
#define PTASK_SCHED_SET_ALPHA		(1U << 1)
#define PTASK_SCHED_SET_POLICY		(1U << 2)
#define PTASK_SCHED_SET_TIMER		(1U << 3)
#define PTASK_SCHED_SET_WINDOW		(1U << 4)
#define PTASK_SCHED_SET_ALL		((1U << 5) - 1)

/**
 * struct ptask_proc_info - one process's accounting
 * @pid: its thread-group id in the initial pid namespace, the key of its
 *	record: two processes that are both pid 1 of their own namespaces
 *	have two records (in user mode: the pid ptaskd's SO_PEERCRED gives)
 * @uid: its uid when it first created a ptask
 * @nice: its nice value as of its last call
 * @weight: the weight in use (override, else CFS weight of @nice)
 * @weight_override: 0, or the administrator's weight
 * @active: in P
 * @held: held by a negative budget with work queued
 * @queued: its GPU ptasks Queued now
 * @running: its invocations taken and not completed
 * @ptasks: its live ptasks
 * @budget_ns: B_p (negative: held while it has work)
 * @bmax_ns: B_max,p (0 outside P)
 * @gpu_ns: GPU time of all its invocations
 * @avg_ns: running average of one invocation's GPU time
 * @invocations: its completed GPU invocations
 * @held_ns: total time it was held
 */
struct ptask_proc_info {
	__s32 pid;
	__u32 uid;
	__s32 nice;
	__u32 weight;
	__u32 weight_override;
	__u32 active;
	__u32 held;
	__u32 queued;
	__u32 running;
	__u32 ptasks;
	__s64 budget_ns;
	__s64 bmax_ns;
	__u64 gpu_ns;
	__u64 avg_ns;
	__u64 invocations;
	__u64 held_ns;
};

/*
 * Submission and completion rings (version PTASK_RING_VERSION)
 * ============================================================
 *
 * A ring carries push, pull, datablock create and datablock release
 * calls without a system call or a socket message per call.  It is one
 * shared region in io_uring's shape: a submission queue (SQ) the client
 * produces and the executing side consumes, and a completion queue (CQ)
 * the executing side produces and the client consumes.
 *
 * Where it comes from.  User mode: ptaskd's PTASKD_OP_RING_SETUP
 * (uapi/ptaskd.h) answers with the fd of a sealed memfd holding the
 * region, laid out and initialised by ptaskd; the connection that asked
 * stays open as the ring's lifeline (closing it closes the ring).  Kernel
 * mode: PTASK_IOC_RING_SETUP (below, "Kernel-mode rings") lays a region
 * out in ptask.ko and answers where to mmap it from /dev/ptask, and
 * PTASK_IOC_RING_ENTER consumes a batch of entries per system call, as
 * io_uring_enter does.  The layout, the indices, the entries and their
 * checks below are the same in both modes.
 *
 * Layout.  struct ptask_ring_hdr at offset 0 says everything a side
 * needs: PTASK_RING_MAGIC, PTASK_RING_VERSION, the entry counts (powers
 * of two, 1..PTASK_RING_ENTRIES_MAX), the entry sizes and where each
 * part starts.  Every offset is a multiple of 64, every part lies
 * inside @region_bytes and no two overlap.  The SQ's and the CQ's
 * struct ptask_ring_queue each keep head, tail and flags on cache lines
 * of their own, so producer and consumer do not write the same line.
 * A side that maps a region checks all of this and refuses (-EINVAL) a
 * region that breaks any rule; it reads the header once and never again.
 *
 * Indices.  head and tail are free-running u32 counters; entry i lives
 * in slot (i & (entries - 1)).  tail - head (mod 2^32) is the number of
 * entries queued and can never exceed entries.  Only the producer writes
 * tail, only the consumer writes head; each side keeps its own copy of
 * the index it writes and never trusts the shared one, and a side that
 * reads the other's index checks it: a tail more than @entries ahead of
 * the consumer's head, or a head that claims entries never produced, is
 * a broken ring (ptaskd closes it and logs once).
 *
 * Ordering (C11 / kernel atomics):
 *   producer: write the entry; store-release tail.
 *   consumer: load-acquire tail; read (copy) the entry; store-release
 *             head.
 *   producer: load-acquire head before it reuses a slot.
 * The consumer copies an entry out of shared memory before it looks at
 * it, and checks the copy, so a producer that rewrites an entry while it
 * is read changes nothing but that call's arguments.
 *
 * Doorbells.  A consumer with nothing to do spins for a bounded time (a
 * futex wake-up costs 12-14 us, more at p99, on the machines measured),
 * then sets PTASK_RING_SLEEPING in its queue's @flags (an atomic RMW,
 * sequentially consistent), loads tail again and, if it has not moved,
 * waits with FUTEX_WAIT (shared, not private) on the tail word for the
 * value it saw.  A producer, after its store-release of tail, issues a
 * full fence, loads @flags and calls FUTEX_WAKE on the tail word only if
 * PTASK_RING_SLEEPING is set.  The two fences make a lost wake-up
 * impossible (the Dekker pattern); the consumer clears the flag once it
 * is awake.  Consumers wait in bounded slices anyway, to notice the
 * other side's death (user mode: the lifeline socket's hang-up).
 *
 * Entries.  A struct ptask_sqe is the call's command number (@cmd:
 * PTASK_IOC_PUSH, _PULL, _DATABLOCK_CREATE or _DATABLOCK_RELEASE), its
 * @flags and the call's own struct in @arg, exactly as the ioctl takes
 * it (its size field first; a size larger than @arg is -EINVAL, since
 * the bytes past the entry are not the call's).  It is checked like the
 * ioctl's struct, with the same table and ptask_args_check(), and
 * completes with the errno the ioctl would give: -ENOTTY for a number
 * that is no ioctl, -EOPNOTSUPP for an ioctl that rings do not carry,
 * -EINVAL for unknown PTASK_SQE_* flags.  Blocking calls block the
 * ring: its entries run in order, one at a time; a program that wants
 * a pull and a push in flight together uses two rings.  The one
 * exception: a fire-and-forget release (below) may run after pushes
 * queued behind it, while their work runs, and after a pull behind it
 * that takes a datablock already in its channel, which no release can
 * change (user mode does both; a failing release's completion then
 * follows that pull's); but never after a push of the same datablock
 * nor after any other entry behind it, and soon when nothing follows
 * it.  So a release is certainly done once an entry behind it other
 * than a push or a pull has completed.
 *
 * A struct ptask_cqe answers one entry: the entry's @user_data, @res (0
 * or the -errno the ioctl returns) and @arg, the struct as the ioctl
 * copies it out (only when @res is 0 and the ioctl copies out).  With
 * PTASK_CQE_MEM (user mode, a pull or create that succeeded) @arena,
 * @arena_bytes and @arena_offset say where the datablock's bytes are:
 * the arena's id (the one PTASKD_OP_MAP reports and passes the fd of)
 * and the offset in it, so a client that mapped that arena before maps
 * nothing for this call.  An entry submitted with
 * PTASK_SQE_NO_CQE_ON_SUCCESS (fire and forget, meant for releases)
 * gets a CQE only if it fails.
 *
 * The CQ holds PTASK_RING_CQ_FACTOR times the SQ's entries.  A producer
 * never overwrites an entry not consumed: when the CQ is full the
 * executing side waits for the client to consume (user mode; in kernel
 * mode RING_ENTER stops and returns instead, see below), so a client
 * that submits fire-and-forget entries also reaps the CQ while it waits.
 */
#define PTASK_RING_MAGIC		0x474e5250U	/* "PRNG" */
#define PTASK_RING_VERSION		1
#define PTASK_RING_ENTRIES_MAX		4096
#define PTASK_RING_CQ_FACTOR		2
#define PTASK_RING_ALIGN		64

/* struct ptask_ring_queue.flags */
#define PTASK_RING_SLEEPING		(1U << 0)	/* consumer sleeps: ring */

/**
 * struct ptask_ring_hdr - the first bytes of a ring region
 * @magic: PTASK_RING_MAGIC
 * @version: PTASK_RING_VERSION
 * @sq_entries: SQ slots, a power of two
 * @cq_entries: CQ slots, a power of two
 * @sqe_size: sizeof(struct ptask_sqe)
 * @cqe_size: sizeof(struct ptask_cqe)
 * @region_bytes: the region's size
 * @sq_off: offset of the SQ's struct ptask_ring_queue
 * @cq_off: offset of the CQ's struct ptask_ring_queue
 * @sqes_off: offset of the SQ's slots
 * @cqes_off: offset of the CQ's slots
 */
struct ptask_ring_hdr {
	__u32 magic;
	__u32 version;
	__u32 sq_entries;
	__u32 cq_entries;
	__u32 sqe_size;
	__u32 cqe_size;
	__u64 region_bytes;
	__u64 sq_off;
	__u64 cq_off;
	__u64 sqes_off;
	__u64 cqes_off;
};

/**
 * struct ptask_ring_queue - one queue's indices, a cache line each
 * @head: consumer's index (written by the consumer only)
 * @tail: producer's index (written by the producer only; the futex word)
 * @flags: PTASK_RING_SLEEPING (written by the consumer)
 */
struct ptask_ring_queue {
	__u32 head;
	__u32 pad_head[15];
	__u32 tail;
	__u32 pad_tail[15];
	__u32 flags;
	__u32 pad_flags[15];
};

/* struct ptask_sqe.flags */
#define PTASK_SQE_NO_CQE_ON_SUCCESS	(1U << 0)
#define PTASK_SQE_DATA			(1U << 1)	/* user mode: below */
#define PTASK_SQE_FLAGS_ALL		(PTASK_SQE_NO_CQE_ON_SUCCESS | \
					 PTASK_SQE_DATA)

/**
 * struct ptask_ring_mem - user mode: where a taken port's datablock is
 *	(EXEC_TAKE through a ring's data area, PTASK_SQE_DATA)
 * @arena: the arena (PTASKD_OP_MAP's id) holding it; 0: unknown (no
 *	datablock, or ask with PTASKD_OP_MAP)
 * @arena_bytes: that arena's size
 * @offset: the datablock's first byte in it
 */
struct ptask_ring_mem {
	__u64 arena;
	__u64 arena_bytes;
	__u64 offset;
};

/**
 * union ptask_ring_arg - the call's struct, as its ioctl takes it
 */
union ptask_ring_arg {
	__u32 size;
	struct ptask_push push;
	struct ptask_pull pull;
	struct ptask_datablock_create create;
	struct ptask_datablock_release release;
	struct ptask_exec_complete complete;	/* kernel mode only */
	__u8 bytes[48];
};

/**
 * struct ptask_sqe - a submission (64 bytes)
 * @user_data: the client's, copied to the completion
 * @cmd: PTASK_IOC_PUSH, _PULL, _DATABLOCK_CREATE or _DATABLOCK_RELEASE
 *	(kernel mode also PTASK_IOC_EXEC_TAKE and _EXEC_COMPLETE)
 * @flags: PTASK_SQE_*
 * @arg: the call's struct
 */
struct ptask_sqe {
	__u64 user_data;
	__u32 cmd;
	__u32 flags;
	union ptask_ring_arg arg;
};

/* struct ptask_cqe.flags */
#define PTASK_CQE_MEM			(1U << 0)	/* arena fields valid */

/**
 * struct ptask_cqe - a completion (96 bytes)
 * @user_data: the entry's
 * @res: 0 or -errno, what the ioctl returns
 * @flags: PTASK_CQE_*
 * @arg: the struct as the ioctl copies it out (zero if it does not)
 * @arena: PTASK_CQE_MEM: the arena holding the datablock
 * @arena_bytes: PTASK_CQE_MEM: that arena's size
 * @arena_offset: PTASK_CQE_MEM: the datablock's first byte in it
 * @reserved: 0
 */
struct ptask_cqe {
	__u64 user_data;
	__s32 res;
	__u32 flags;
	union ptask_ring_arg arg;
	__u64 arena;
	__u64 arena_bytes;
	__u64 arena_offset;
	__u64 reserved;
};

/*
 * Kernel-mode rings (ptask.ko): PTASK_IOC_RING_SETUP, PTASK_IOC_RING_ENTER
 * ========================================================================
 *
 * PTASK_IOC_RING_SETUP (struct ptask_ring_setup)
 *	Make a ring for this fd: the module allocates a region of
 *	@sq_entries SQ slots (0: PTASK_RING_SQ_DEFAULT; else a power of two
 *	up to PTASK_RING_ENTRIES_MAX / PTASK_RING_CQ_FACTOR) and
 *	PTASK_RING_CQ_FACTOR times as many CQ slots, lays it out and
 *	initialises it exactly as "Layout" above says (struct ptask_ring_hdr
 *	at offset 0, empty queues), and answers the ring's id (@ring, for
 *	RING_ENTER), the slots granted, the region's size rounded up to
 *	whole pages (@region_bytes, the mmap length) and @mmap_offset:
 *	mmap(NULL, region_bytes, PROT_READ|PROT_WRITE, MAP_SHARED, fd,
 *	mmap_offset).  Ring offsets start at PTASK_RING_MMAP_BASE, a range
 *	no datablock offset reaches; an offset there that names no ring of
 *	this fd is -ENOENT, MAP_PRIVATE or a length past @region_bytes
 *	-EINVAL.  The pages are ordinary pages, like a datablock's, and
 *	count in /sys/kernel/ptask/objects/buffers while the ring or a
 *	mapping of it lives.  An fd has at most PTASK_RING_MAX_PER_FD
 *	rings; they live as long as the fd (its last close, or the death
 *	of its last holder, frees them, whatever their queues hold; a
 *	mapping stays valid until munmap).  One ring carries one call at a
 *	time, so a program with several threads calling at once keeps one
 *	ring per thread (libptask keeps a pool).  Errors: -EINVAL (flags,
 *	reserved, @cq_entries or @ring non-zero, a bad @sq_entries),
 *	-ENOSPC (the fd has PTASK_RING_MAX_PER_FD rings), -ENOMEM.
 *
 * PTASK_IOC_RING_ENTER (struct ptask_ring_enter)
 *	Consume up to @to_submit entries of ring @ring (fewer when fewer
 *	are queued), in order, one at a time, each exactly as its ioctl:
 *	the entry's struct goes through the ioctl's own path (the checks of
 *	the command table and ptask_args_check, the call, the struct copied
 *	out) with the entry's copy standing for the user's struct, and its
 *	completion carries what the ioctl returns (see "Entries" above for
 *	the errors of the entry itself).  Returns the number of entries
 *	consumed.  An entry is consumed once its call is done and its
 *	completion posted; nothing else is ever consumed.
 *
 *	Blocking: an entry that would block (a push to a full channel or a
 *	pull from an empty one, without PTASK_NONBLOCK or O_NONBLOCK)
 *	blocks ENTER, as its ioctl would, while this ENTER has posted fewer
 *	than @min_complete completions; once it has posted @min_complete,
 *	ENTER returns instead and leaves that entry queued for a later
 *	ENTER.  So @min_complete of at least @to_submit runs every entry
 *	as the ioctls would; 0 never blocks.  ENTER blocks no later than
 *	@timeout_ns (an absolute CLOCK_MONOTONIC time, 0 for none): then,
 *	and on a signal, the entry it blocks in stays queued and ENTER
 *	returns the entries consumed, or -ETIMEDOUT or -EINTR (or a
 *	restart) when it consumed none.  An entry's own @timeout_ns is its
 *	ioctl's: passing it completes the entry with -ETIMEDOUT.
 *
 *	A full CQ: ENTER never overwrites a completion the client has not
 *	consumed, so before each entry it looks for a free CQ slot and,
 *	when there is none, stops and returns the entries consumed so far
 *	(0 if none: reap the CQ, then enter again).  Fire-and-forget
 *	entries need the slot as well, since they may fail.
 *
 *	The module keeps its own copies of the indices it writes (the SQ's
 *	head, the CQ's tail) and of the layout, and never reads the header
 *	after setup: a client that scribbles on the header changes nothing
 *	for the module, one that scribbles on the indices breaks its ring
 *	(-EPROTO: the SQ's tail more than @sq_entries ahead of the module's
 *	head, or a CQ head behind the tail by more than the CQ holds or
 *	ahead of it), on every ENTER until the indices make sense again.
 *	Entries are copied out of the region before they are looked at.
 *	ENTER is the doorbell: the module never sleeps on the SQ and posts
 *	every completion before ENTER returns, so kernel mode uses neither
 *	PTASK_RING_SLEEPING nor futexes.  Only one ENTER runs on a ring at
 *	a time (another thread's ENTER on the same ring waits for it).
 *	Errors: -EINVAL (flags or reserved non-zero, @to_submit over the
 *	ring's @sq_entries), -ENOENT (no ring @ring on this fd), -EPROTO,
 *	-ETIMEDOUT, -EINTR.
 *
 *	Executor entries.  In kernel mode a ring also carries
 *	PTASK_IOC_EXEC_TAKE and PTASK_IOC_EXEC_COMPLETE, for whoever may
 *	make those calls on the fd (a registered executor; any fd for its
 *	PTASK_PTASK_SELF ptasks; else the entry completes with -EPERM, as
 *	the ioctl).  Their pointer fields (@invocations and @ports, @outputs)
 *	are user pointers the module copies from and to exactly as the
 *	ioctl does, so a batch of completions and the next take cost one
 *	ENTER; a take that blocks blocks ENTER as a pull does.  struct
 *	ptask_exec_complete fits an entry whole; struct ptask_exec_take
 *	does at PTASK_EXEC_TAKE_SIZE_VER0 (48 bytes), so its completion
 *	carries no @policy (an executor that follows the administrator's
 *	policy reads it from a take by ioctl now and then).
 *	PTASK_SQE_DATA (user mode's, below) is -EINVAL here.
 *
 *	User mode: a ring set up with a data area (PTASKD_RING_DATA,
 *	uapi/ptaskd.h) carries them too, flagged PTASK_SQE_DATA: their
 *	pointer fields are then byte offsets into the ring's data area,
 *	since ptaskd cannot read the client's memory.  EXEC_COMPLETE reads
 *	@n_outputs struct ptask_exec_output at @outputs; EXEC_TAKE writes
 *	its invocations at @invocations (room for @max_invocations) and its
 *	port records at @ports (room for @max_ports), each port record
 *	followed, @max_ports records on, by a struct ptask_ring_mem saying
 *	where its datablock's bytes are (so a CPU ptask's inputs map
 *	without asking).  ptaskd copies what it reads out of the area
 *	before it looks at it.  A part outside the area completes with
 *	-EFAULT (the ioctl's answer to a bad pointer); PTASK_SQE_DATA on
 *	another command is -EINVAL; these commands without it, or on a
 *	ring without a data area, are -EOPNOTSUPP.
 */
#define PTASK_RING_SQ_DEFAULT		64
#define PTASK_RING_MAX_PER_FD		64
#define PTASK_RING_MMAP_BASE		(1ULL << 48)	/* past every datablock */
#define PTASK_RING_MMAP_STRIDE		(1ULL << 24)	/* one ring's offsets */

/**
 * struct ptask_ring_setup - argument of PTASK_IOC_RING_SETUP
 * @size: sizeof(struct ptask_ring_setup)
 * @flags: must be 0
 * @sq_entries: in: SQ slots wanted (0: PTASK_RING_SQ_DEFAULT); out:
 *	granted
 * @cq_entries: in: must be 0; out: CQ slots
 * @ring: in: must be 0; out: the ring's id on this fd
 * @reserved: must be 0
 * @region_bytes: out: the region's size in whole pages (mmap length)
 * @mmap_offset: out: where to mmap it
 */
struct ptask_ring_setup {
	__u32 size;
	__u32 flags;
	__u32 sq_entries;
	__u32 cq_entries;
	__u32 ring;
	__u32 reserved;
	__u64 region_bytes;
	__u64 mmap_offset;
};
#define PTASK_RING_SETUP_SIZE_VER0	40

/**
 * struct ptask_ring_enter - argument of PTASK_IOC_RING_ENTER
 * @size: sizeof(struct ptask_ring_enter)
 * @flags: must be 0
 * @ring: the ring (PTASK_IOC_RING_SETUP's @ring)
 * @to_submit: most entries to consume, at most the ring's @sq_entries
 * @min_complete: completions to post before an entry that would block
 *	makes ENTER return instead of blocking
 * @reserved: must be 0
 * @timeout_ns: absolute CLOCK_MONOTONIC deadline for blocking, 0 for none
 */
struct ptask_ring_enter {
	__u32 size;
	__u32 flags;
	__u32 ring;
	__u32 to_submit;
	__u32 min_complete;
	__u32 reserved;
	__u64 timeout_ns;
};
#define PTASK_RING_ENTER_SIZE_VER0	32

/*
 * Client calls 0x10 and 0x11 (kernel rings); 0x43 is taken by the
 * executor's settle call, 0x44 is kept for an executor ring.
 */
#define PTASK_IOC_RING_SETUP		_IOWR(PTASK_IOC_MAGIC, 0x10, struct ptask_ring_setup)
#define PTASK_IOC_RING_ENTER		_IOW(PTASK_IOC_MAGIC, 0x11, struct ptask_ring_enter)

#endif /* _UAPI_LINUX_PTASK_H */

/* comms.c - mpcore tests: communicators, spawn_multiple's checks, graph topologies and
 * neighbourhood collectives. */
#include "mpcore_tests.h"

void test_comms(void)
{
    mp_comm_t d, s;
    mp_stats_t before, st;
    int v;
    mp_stats(&before);
    CHECK(before.comms >= 2); /* world and self */
    CHECK(mp_comm_dup(MP_COMM_WORLD, &d) == 0 && d > MP_COMM_SELF);
    mp_stats(&st);
    CHECK(st.comms == before.comms + 1);
    CHECK(mp_comm_size(d, &v) == 0 && v == 1);
    CHECK(mp_comm_split(MP_COMM_WORLD, MP_UNDEFINED, 0, &s) == 0 && s == MP_COMM_NULL);
    CHECK(mp_comm_split(MP_COMM_WORLD, 3, 0, &s) == 0 && s > MP_COMM_SELF);
    CHECK(mp_comm_free(s) == 0);
    CHECK(mp_comm_free(d) == 0);
    CHECK(mp_comm_free(d) == MP_EHANDLE);
    CHECK(mp_comm_rank(d, &v) == MP_EHANDLE);
    mp_stats(&st);
    CHECK(st.comms == before.comms);
}

/* spawn_multiple's checks at the root, before MPI is asked (a singleton could not
 * spawn anyway): no command, a command without a name or processes, a stale info,
 * a root outside the communicator; nothing is registered by a refused call. */
void test_spawn_multiple_checks(void)
{
    const char *cmds[2] = { "true", "" };
    const char *const none[1] = { NULL };
    const char *const *argvs[2] = { none, none };
    int32_t procs[2] = { 1, 1 }, errs[2];
    mp_info_t infos[2] = { MP_INFO_NULL, MP_INFO_NULL }, stale;
    mp_comm_t out = MP_COMM_NULL;
    mp_stats_t before, st;
    mp_stats(&before);
    CHECK(mp_comm_spawn_multiple(0, cmds, argvs, procs, infos, 0, MP_COMM_WORLD, &out, errs) == MP_EINVAL);
    CHECK(mp_comm_spawn_multiple(2, NULL, argvs, procs, infos, 0, MP_COMM_WORLD, &out, errs) == MP_EINVAL);
    CHECK(mp_comm_spawn_multiple(2, cmds, argvs, procs, infos, 0, MP_COMM_WORLD, &out, errs) == MP_EINVAL);
    CHECK(last_error_mentions("command 1"));
    cmds[1] = "true";
    procs[0] = 0;
    CHECK(mp_comm_spawn_multiple(2, cmds, argvs, procs, infos, 0, MP_COMM_WORLD, &out, errs) == MP_EINVAL);
    CHECK(last_error_mentions("command 0"));
    procs[0] = 1;
    CHECK(mp_info_create(&stale) == 0 && mp_info_free(stale) == 0);
    infos[1] = stale;
    CHECK(mp_comm_spawn_multiple(2, cmds, argvs, procs, infos, 0, MP_COMM_WORLD, &out, errs) == MP_EHANDLE);
    infos[1] = MP_INFO_NULL;
    CHECK(mp_comm_spawn_multiple(2, cmds, argvs, procs, infos, 1, MP_COMM_WORLD, &out, errs) == MP_EROOT);
    CHECK(out == MP_COMM_NULL);
    mp_stats(&st);
    CHECK(st.comms == before.comms);
}

/* Graph topologies and neighborhood collectives on one rank: queries on a
 * communicator without the topology and bad arguments are refused before MPI
 * (MP_EINVAL / MP_ERANK / MP_ECOUNT naming what is wrong); a self-loop graph
 * and a weighted self-edge dist graph exchange with themselves. */
void test_topologies(void)
{
    int32_t index[2] = { 1, 0 }, edges[2] = { 0, 0 }, out[4] = { 0 }, w[2] = { 7, 7 }, counts[1] = { 2 }, displs[1] = { 0 };
    int32_t sendv[2] = { 41, 42 }, recvv[2] = { 0, 0 };
    int topo = -1, in = -1, outd = -1, weighted = -1, n = 0, e = 0, rc_many;
    mp_comm_t g, d;
    mp_coll_t c;
    CHECK(mp_topo_test(MP_COMM_WORLD, &topo) == 0 && topo == MP_TOPO_NONE);
    CHECK(mp_graph_dims(MP_COMM_WORLD, &n, &e) == MP_EINVAL && last_error_mentions("not a graph"));
    CHECK(mp_graph_neighbors_count(MP_COMM_WORLD, 0, &n) == MP_EINVAL);
    CHECK(mp_dist_graph_neighbors(MP_COMM_WORLD, 1, out, NULL, 1, out, NULL) == MP_EINVAL &&
          last_error_mentions("distributed-graph"));
    CHECK(mp_topo_degrees(MP_COMM_WORLD, &in, &outd, &weighted) == MP_EINVAL && last_error_mentions("no topology"));
    memset(&c, 0, sizeof c);
    c.kind = MP_NEIGHBOR_ALLGATHER;
    c.dtype = MP_DT_INT32;
    c.elem_size = 4;
    c.count = 1;
    c.sendbuf = sendv;
    c.recvbuf = recvv;
    CHECK(mp_neighbor_run(MP_COMM_WORLD, &c, NULL, NULL) == MP_EINVAL);

    /* Grids of many dimensions (extent 1: one cell): MPICH's MPI_Cart_shift overwrites its stack
     * past 16 (MAX_CART_DIM), so the MPICH core refuses a 17th before MPI sees the grid; Open
     * MPI's takes any number, shifts included. */
    {
        enum { MANY = 40 };
        int32_t ones[MANY], flat[MANY] = { 0 };
        int src = -1, dst = -1;
        mp_comm_t cart = MP_COMM_NULL;
        for (int i = 0; i < MANY; i++)
            ones[i] = 1;
        CHECK(mp_cart_create(MP_COMM_SELF, 16, ones, flat, 0, &cart) == 0);
        CHECK(mp_cart_shift(cart, 15, 1, &src, &dst) == 0 && src == MP_PROC_NULL && dst == MP_PROC_NULL);
        CHECK(mp_comm_free(cart) == 0);
        cart = MP_COMM_NULL;
        rc_many = mp_cart_create(MP_COMM_SELF, MANY, ones, flat, 0, &cart);
        if (PAL_MPI_BUILD_ABI == 1) { /* MPICH */
            CHECK(rc_many == MP_ENOTSUP && cart == MP_COMM_NULL && last_error_mentions("at most 16"));
        } else {
            CHECK(rc_many == 0 && mp_cart_shift(cart, MANY - 1, 1, &src, &dst) == 0 && dst == MP_PROC_NULL);
            CHECK(mp_comm_free(cart) == 0);
        }
    }

    /* MPI_Dims_create's kept extents: checked before MPI (MPICH's product of 65536 * 65536 wraps
     * to 0 and it divides by it: SIGFPE). */
    {
        int32_t wraps[3] = { 65536, 65536, 0 }, odd[2] = { 4, 0 }, fits[2] = { 0, 2 }, neg[2] = { 0, -2 };
        CHECK(mp_dims_create(4, 3, wraps) == MP_EINVAL && last_error_mentions("past the 4 nodes"));
        CHECK(mp_dims_create(6, 2, odd) == MP_EINVAL && last_error_mentions("does not divide"));
        CHECK(mp_dims_create(6, 2, neg) == MP_EINVAL && last_error_mentions("negative"));
        CHECK(mp_dims_create(6, 2, fits) == 0 && fits[0] == 3 && fits[1] == 2);
    }

    /* Graph arguments. */
    CHECK(mp_graph_create(MP_COMM_WORLD, 2, index, edges, 0, &g) == MP_EINVAL && last_error_mentions("node count"));
    index[0] = -1;
    CHECK(mp_graph_create(MP_COMM_WORLD, 1, index, edges, 0, &g) == MP_EINVAL && last_error_mentions("cumulative"));
    index[0] = 2;
    edges[1] = 1;
    CHECK(mp_graph_create(MP_COMM_WORLD, 1, index, edges, 0, &g) == MP_ERANK && last_error_mentions("edges[1]"));
    CHECK(mp_dist_graph_create_adjacent(MP_COMM_WORLD, 1, edges, NULL, 1, edges, NULL, 1, 0, &d) == MP_EINVAL &&
          last_error_mentions("weight"));
    w[0] = -1;
    CHECK(mp_dist_graph_create_adjacent(MP_COMM_WORLD, 1, edges, w, 1, edges, w, 1, 0, &d) == MP_EINVAL &&
          last_error_mentions("negative"));
    CHECK(mp_dist_graph_create(MP_COMM_WORLD, 1, edges, counts, edges, NULL, 0, 0, &d) == MP_ERANK); /* edges[1] = 1 */

    /* A one-node graph with a self-loop. */
    index[0] = 1;
    edges[0] = 0;
    CHECK(mp_graph_create(MP_COMM_WORLD, 1, index, edges, 0, &g) == 0);
    CHECK(mp_topo_test(g, &topo) == 0 && topo == MP_TOPO_GRAPH);
    CHECK(mp_graph_dims(g, &n, &e) == 0 && n == 1 && e == 1);
    CHECK(mp_graph_get(g, 0, 0, out, out) == MP_ECOUNT);
    CHECK(mp_graph_neighbors(g, 0, 1, out) == 0 && out[0] == 0);
    CHECK(mp_graph_neighbors_count(g, 1, &n) == MP_ERANK);
    CHECK(mp_dist_graph_neighbors(g, 1, out, NULL, 1, out, NULL) == MP_EINVAL);
    CHECK(mp_topo_degrees(g, &in, &outd, &weighted) == 0 && in == 1 && outd == 1 && weighted == 0);
    CHECK(mp_neighbor_run(g, &c, NULL, NULL) == 0 && recvv[0] == 41);
    c.kind = MP_NEIGHBOR_KIND_COUNT;
    CHECK(mp_neighbor_run(g, &c, NULL, NULL) == MP_EINVAL);
    c.kind = MP_NEIGHBOR_ALLTOALLV;
    counts[0] = -1;
    c.sendcounts = c.recvcounts = counts;
    c.sdispls = c.rdispls = displs;
    CHECK(mp_neighbor_run(g, &c, NULL, NULL) == MP_ECOUNT);
    counts[0] = 2;
    recvv[0] = 0;
    CHECK(mp_neighbor_run(g, &c, NULL, NULL) == 0 && recvv[0] == 41 && recvv[1] == 42);
    c.kind = MP_NEIGHBOR_ALLTOALLW;
    CHECK(mp_neighbor_run(g, &c, NULL, NULL) == MP_EINVAL); /* no byte displacements */
    {
        mp_req_t r;
        int64_t bytes[1] = { 0 };
        CHECK(mp_neighbor_post(g, &c, bytes, bytes, NULL, NULL, NULL, &r) == MP_EINVAL && last_error_mentions("scratch"));
    }
    CHECK(mp_comm_free(g) == 0);

    /* A weighted dist graph: this rank to itself, weight 7. */
    w[0] = 7;
    CHECK(mp_dist_graph_create_adjacent(MP_COMM_WORLD, 1, edges, w, 1, edges, w, 1, 0, &d) == 0);
    CHECK(mp_topo_test(d, &topo) == 0 && topo == MP_TOPO_DIST_GRAPH);
    CHECK(mp_topo_degrees(d, &in, &outd, &weighted) == 0 && in == 1 && outd == 1 && weighted == 1);
    out[0] = out[1] = -1;
    CHECK(mp_dist_graph_neighbors(d, 1, out, out + 1, 1, out + 2, out + 3) == 0 && out[0] == 0 && out[1] == 7 &&
          out[2] == 0 && out[3] == 7);
    CHECK(mp_dist_graph_neighbors(d, 0, out, NULL, 1, out, NULL) == MP_ECOUNT);
    CHECK(mp_comm_free(d) == 0);
}

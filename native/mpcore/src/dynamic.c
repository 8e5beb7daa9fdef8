/* dynamic.c - intercommunicators and dynamic processes (MPI-4.0 7.6 and
 * chapter 11): create, merge, spawn, ports, names. */
#include "comms.h"
#include "info.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mp_intercomm_create(mp_comm_t local, int local_leader, mp_comm_t peer, int remote_leader, int tag,
                        mp_comm_t *newcomm)
{
    const comm_entry_t *cl = mp_comm_get(local), *cp = mp_comm_get(peer);
    MPI_Comm out = MPI_COMM_NULL;
    int rc;
    if (!cl || !mp_ready())
        return mp_fail_comm(local);
    if ((unsigned)local_leader >= (unsigned)cl->size)
        return mp_fail(MP_ERANK, "local leader %d is outside [0, %d)", local_leader, cl->size);
    if (cl->rank == local_leader) { /* the peer communicator matters at the leaders only */
        if (!cp)
            return mp_fail_comm(peer);
        if ((unsigned)remote_leader >= (unsigned)cp->size)
            return mp_fail(MP_ERANK, "remote leader %d is outside [0, %d)", remote_leader, cp->size);
    }
    if ((rc = mp_check_send_tag(tag)))
        return rc;
    mp_blocking_enter();
    rc = pal_mpi.Intercomm_create(cl->mpi, local_leader, cp ? cp->mpi : MPI_COMM_NULL, remote_leader, tag, &out);
    mp_blocking_leave();
    return mp_comm_adopt(rc, out, "MPI_Intercomm_create", newcomm);
}

int mp_intercomm_merge(mp_comm_t inter, int high, mp_comm_t *newcomm)
{
    const comm_entry_t *ce;
    MPI_Comm out = MPI_COMM_NULL;
    int rc;
    if ((rc = mp_comm_lookup(inter, &ce)))
        return rc;
    if (!ce->is_inter)
        return mp_fail(MP_EINVAL, "communicator %d is not an intercommunicator", inter);
    mp_blocking_enter();
    rc = pal_mpi.Intercomm_merge(ce->mpi, high ? 1 : 0, &out);
    mp_blocking_leave();
    return mp_comm_adopt(rc, out, "MPI_Intercomm_merge", newcomm);
}

static int spawn(const char *command, const char *const *argv, int maxprocs, mp_info_t info, int root,
                 mp_comm_t comm, mp_comm_t *intercomm, int32_t *errcodes)
{
    const comm_entry_t *ce;
    MPI_Comm out = MPI_COMM_NULL;
    MPI_Info mi = MPI_INFO_NULL;
    int rc;
    if ((rc = mp_comm_lookup(comm, &ce)))
        return rc;
    if ((unsigned)root >= (unsigned)ce->size)
        return mp_fail(MP_EROOT, "root %d is outside [0, %d)", root, ce->size);
    if (ce->rank == root && (!command || !*command || maxprocs <= 0))
        return mp_fail(MP_EINVAL, "spawn needs a command and a positive process count (got %d)", maxprocs);
    if ((rc = mp_info_lookup(info, &mi)))
        return rc;
    mp_blocking_enter();
    rc = pal_mpi.Comm_spawn(command, (char **)argv, maxprocs, mi, root, ce->mpi, &out,
                            errcodes ? errcodes : MPI_ERRCODES_IGNORE);
    mp_blocking_leave();
    return mp_comm_adopt(rc, out, "MPI_Comm_spawn", intercomm);
}

int mp_comm_spawn(const char *command, const char *const *argv, int maxprocs, int root, mp_comm_t comm,
                  mp_comm_t *intercomm, int32_t *errcodes)
{
    return spawn(command, argv, maxprocs, MP_INFO_NULL, root, comm, intercomm, errcodes);
}

/* The info only matters at the root (MPI-4.0 11.8.2), but a handle given elsewhere is still checked. */
int mp_comm_spawn_info(const char *command, const char *const *argv, int maxprocs, mp_info_t info, int root,
                       mp_comm_t comm, mp_comm_t *intercomm, int32_t *errcodes)
{
    return spawn(command, argv, maxprocs, info, root, comm, intercomm, errcodes);
}

/* MPI_Comm_spawn_multiple: count commands, each with its argv (NULL-terminated, or NULL
 * for none), process count and info.  Everything is read and checked at the root only
 * (MPI-4.0 11.8.3); the other ranks may pass NULL arrays.  MPI's infos are looked up
 * into a heap array since count is the caller's. */
int mp_comm_spawn_multiple(int count, const char *const *commands, const char *const *const *argvs,
                           const int32_t *maxprocs, const mp_info_t *infos, int root, mp_comm_t comm,
                           mp_comm_t *intercomm, int32_t *errcodes)
{
    const comm_entry_t *ce;
    MPI_Comm out = MPI_COMM_NULL;
    MPI_Info *mi = NULL;
    int rc, at_root;
    if ((rc = mp_comm_lookup(comm, &ce)))
        return rc;
    if ((unsigned)root >= (unsigned)ce->size)
        return mp_fail(MP_EROOT, "root %d is outside [0, %d)", root, ce->size);
    at_root = ce->rank == root;
    if (at_root) {
        if (count <= 0 || !commands || !maxprocs)
            return mp_fail(MP_EINVAL, "spawn_multiple needs at least one command with its process count (got %d)",
                           count);
        if (!(mi = malloc((size_t)count * sizeof *mi)))
            return mp_fail(MP_ENOMEM, "no memory for %d infos", count);
        for (int i = 0; i < count; i++) {
            mi[i] = MPI_INFO_NULL;
            if (!commands[i] || !*commands[i] || maxprocs[i] <= 0) {
                rc = mp_fail(MP_EINVAL, "spawn_multiple: command %d needs a name and a positive process count (got %d)",
                             i, maxprocs[i]);
                break;
            }
            if ((rc = mp_info_lookup(infos ? infos[i] : MP_INFO_NULL, &mi[i])))
                break;
        }
        if (rc) {
            free(mi);
            return rc;
        }
    }
    mp_blocking_enter();
    rc = pal_mpi.Comm_spawn_multiple(at_root ? count : 0, (char **)commands, (char ***)argvs, (const int *)maxprocs,
                                     mi, root, ce->mpi, &out, errcodes ? errcodes : MPI_ERRCODES_IGNORE);
    mp_blocking_leave();
    free(mi);
    return mp_comm_adopt(rc, out, "MPI_Comm_spawn_multiple", intercomm);
}

/* The parent intercommunicator, registered by mp_init. */
mp_comm_t mp_g_parent = MP_COMM_NULL;

int mp_comm_get_parent(mp_comm_t *parent)
{
    if (!mp_ready())
        return mp_fail_state();
    *parent = mp_g_parent;
    return 0;
}

int mp_open_port(char *buf, int cap)
{
    char port[MPI_MAX_PORT_NAME + 1];
    int rc, len;
    if (!mp_ready())
        return mp_fail_state();
    if ((rc = MP_MPI_CHECK(pal_mpi.Open_port(MPI_INFO_NULL, port), "MPI_Open_port")))
        return rc;
    port[MPI_MAX_PORT_NAME] = '\0';
    len = (int)strlen(port);
    if (!buf || cap <= len) {
        /* A port whose name the caller never gets could never be closed: close it now. */
        pal_mpi.Close_port(port);
        return mp_fail(MP_EINVAL, "a buffer of %d bytes cannot hold the port name (%d bytes and its NUL): "
                       "the port was closed again", buf ? cap : 0, len);
    }
    memcpy(buf, port, (size_t)len + 1);
    return len;
}

int mp_close_port(const char *port)
{
    if (!mp_ready())
        return mp_fail_state();
    if (!port)
        return mp_fail(MP_EINVAL, "port name is NULL");
    return MP_MPI_CHECK(pal_mpi.Close_port(port), "MPI_Close_port");
}

static int accept_or_connect(int connect, const char *port, int root, mp_comm_t comm, mp_comm_t *newcomm)
{
    const comm_entry_t *ce;
    MPI_Comm out = MPI_COMM_NULL;
    int rc;
    if ((rc = mp_comm_lookup(comm, &ce)))
        return rc;
    if ((unsigned)root >= (unsigned)ce->size)
        return mp_fail(MP_EROOT, "root %d is outside [0, %d)", root, ce->size);
    if (ce->rank == root && (!port || !*port))
        return mp_fail(MP_EINVAL, "the root needs a port name");
    mp_blocking_enter();
    rc = connect ? pal_mpi.Comm_connect(port, MPI_INFO_NULL, root, ce->mpi, &out)
                 : pal_mpi.Comm_accept(port, MPI_INFO_NULL, root, ce->mpi, &out);
    mp_blocking_leave();
    return mp_comm_adopt(rc, out, connect ? "MPI_Comm_connect" : "MPI_Comm_accept", newcomm);
}

int mp_comm_accept(const char *port, int root, mp_comm_t comm, mp_comm_t *newcomm)
{
    return accept_or_connect(0, port, root, comm, newcomm);
}

int mp_comm_connect(const char *port, int root, mp_comm_t comm, mp_comm_t *newcomm)
{
    return accept_or_connect(1, port, root, comm, newcomm);
}

int mp_comm_disconnect(mp_comm_t comm)
{
    return mp_comm_release(comm, pal_mpi.Comm_disconnect, "MPI_Comm_disconnect");
}

static int check_service(const char *service)
{
    if (!mp_ready())
        return mp_fail_state();
    if (!service || !*service)
        return mp_fail(MP_EINVAL, "service name is empty");
    return 0;
}

int mp_publish_name(const char *service, const char *port)
{
    int rc = check_service(service);
    if (rc)
        return rc;
    if (!port || !*port)
        return mp_fail(MP_EINVAL, "port name is empty");
    mp_blocking_enter();
    rc = pal_mpi.Publish_name(service, MPI_INFO_NULL, port);
    mp_blocking_leave();
    return MP_MPI_CHECK(rc, "MPI_Publish_name");
}

int mp_unpublish_name(const char *service, const char *port)
{
    int rc = check_service(service);
    if (rc)
        return rc;
    mp_blocking_enter();
    rc = pal_mpi.Unpublish_name(service, MPI_INFO_NULL, port ? port : "");
    mp_blocking_leave();
    return MP_MPI_CHECK(rc, "MPI_Unpublish_name");
}

int mp_lookup_name(const char *service, char *buf, int cap)
{
    char port[MPI_MAX_PORT_NAME + 1];
    int rc = check_service(service);
    if (rc)
        return rc;
    mp_blocking_enter();
    rc = pal_mpi.Lookup_name(service, MPI_INFO_NULL, port);
    mp_blocking_leave();
    if ((rc = MP_MPI_CHECK(rc, "MPI_Lookup_name")))
        return rc;
    port[MPI_MAX_PORT_NAME] = '\0';
    if (buf && cap > 0)
        snprintf(buf, (size_t)cap, "%s", port);
    return (int)strlen(port);
}

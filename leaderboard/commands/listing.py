"""``papergym list``: environments (with their instance families), solver tasks and agents."""

from __future__ import annotations

from papergym.leaderboard.commands.common import env_module

__all__ = ["cmd_list"]


def cmd_list() -> int:
    import papergym.envs as penvs
    from papergym.agents.base import list_agents, list_unavailable_agents

    print("Environments")
    for env_id in penvs.list_envs():
        mod = env_module(env_id)
        inst = getattr(mod, "INSTANCES", ())
        print(f"  {env_id}" + (f"  instances: {', '.join(inst)}" if inst else ""))
        for a in list_agents(env_id):
            desc = f"  {a.description}" if a.description else ""
            print(f"    {a.name:<20} {a.role:<9}{desc}")
        for u in list_unavailable_agents(env_id):
            print(f"    {u.name:<20} {u.role:<9}  [unavailable: {u.reason}]")
    from papergym.agents.base import list_solvers
    from papergym.envs.tasks.base import list_tasks

    print("Solver tasks")
    for task_id in list_tasks():
        print(f"  {task_id}")
        for s in list_solvers(task_id):
            desc = f"  {s.description}" if s.description else ""
            req = f"  [needs {', '.join(s.requires)}]" if s.requires else ""
            print(f"    {s.name:<20} {s.role:<9}{desc}{req}")
    return 0

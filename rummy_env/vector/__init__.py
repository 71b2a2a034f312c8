from rummy_env.vector.vec_env import RummyVectorEnv, make_vec

__all__ = ["RummyVectorEnv", "make_vec"]

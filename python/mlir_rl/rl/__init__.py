"""Learning to schedule: the Gymnasium environment, the actor-critic, PPO,
ONNX export, schedule search and evaluation."""

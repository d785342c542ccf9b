#!/usr/bin/python3
"""Writes the seeds of the ONNX importer's fuzz target into DIR (tests/fuzz/corpus/onnx): tiny
models Debian's PyTorch exports, one with an op Plexus has no layer for, and broken files
(bad_*: the replay requires them to be refused).

    /usr/bin/python3 tests/fuzz/make_onnx_seeds.py tests/fuzz/corpus/onnx
"""
import torch, torch.nn as nn, torch.nn.functional as F, sys
out = sys.argv[1]
class Conv(nn.Module):
    def __init__(s):
        super().__init__(); s.conv=nn.Conv2d(1,2,3,padding=1); s.bn=nn.BatchNorm2d(2); s.fc=nn.Linear(8,3)
    def forward(s,x):
        x=F.max_pool2d(F.relu(s.bn(s.conv(x))),2)
        return s.fc(torch.flatten(x,1))
class Mlp(nn.Module):
    def __init__(s):
        super().__init__(); s.a=nn.Linear(3,4); s.b=nn.Linear(4,2)
    def forward(s,x): return s.b(torch.sigmoid(s.a(x))).mean(1)
class Unsupported(nn.Module):
    def __init__(s):
        super().__init__(); s.a=nn.Linear(3,4)
    def forward(s,x): return torch.erf(s.a(x))
class TwoHeads(nn.Module):
    def __init__(s):
        super().__init__(); s.a=nn.Linear(3,4); s.b=nn.Linear(3,2)
    def forward(s,x): return s.a(x), s.b(x)
torch.manual_seed(0)
c=Conv().train()
torch.onnx.export(c, torch.randn(2,1,4,4), out+"/conv_bn_train.onnx", opset_version=13, training=torch.onnx.TrainingMode.TRAINING)
torch.onnx.export(c.eval(), torch.randn(2,1,4,4), out+"/conv_folded.onnx", opset_version=17)
torch.onnx.export(Mlp(), torch.randn(2,5,3), out+"/matmul_add.onnx", opset_version=13, dynamic_axes={"x":{0:"N"}}, input_names=["x"])
torch.onnx.export(Unsupported(), torch.randn(2,3), out+"/bad_unsupported_erf.onnx", opset_version=13)
torch.onnx.export(TwoHeads(), torch.randn(2,3), out+"/bad_two_predictions.onnx", opset_version=13)
data=open(out+"/conv_folded.onnx","rb").read()
open(out+"/bad_truncated.onnx","wb").write(data[:len(data)//2])
open(out+"/bad_not_protobuf.onnx","wb").write(b"this is not an ONNX model\n")

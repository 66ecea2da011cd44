package commit

import "github.com/lancekeeper/lancekeeper/manifest/pb"

// OpKind identifies the operation arm of a transaction.
type OpKind int

// The operation arms of lance.table.Transaction (lance-table-format.md §3.7).
const (
	OpUnknown OpKind = iota
	OpAppend
	OpDelete
	OpOverwrite
	OpCreateIndex
	OpRewrite
	OpMerge
	OpRestore
	OpReserveFragments
	OpUpdate
	OpProject
	OpUpdateConfig
	OpDataReplacement
	OpUpdateMemWalState
	OpClone
	OpUpdateBases
	OpDataOverlay
	numOpKinds
)

// String returns the operation name as Lance spells it in conflict messages.
func (k OpKind) String() string {
	switch k {
	case OpAppend:
		return "Append"
	case OpDelete:
		return "Delete"
	case OpOverwrite:
		return "Overwrite"
	case OpCreateIndex:
		return "CreateIndex"
	case OpRewrite:
		return "Rewrite"
	case OpMerge:
		return "Merge"
	case OpRestore:
		return "Restore"
	case OpReserveFragments:
		return "ReserveFragments"
	case OpUpdate:
		return "Update"
	case OpProject:
		return "Project"
	case OpUpdateConfig:
		return "UpdateConfig"
	case OpDataReplacement:
		return "DataReplacement"
	case OpUpdateMemWalState:
		return "UpdateMemWalState"
	case OpClone:
		return "Clone"
	case OpUpdateBases:
		return "UpdateBases"
	case OpDataOverlay:
		return "DataOverlay"
	}
	return "Unknown"
}

// KindOf returns the operation kind of a transaction message (OpUnknown
// when no arm, or an arm this build does not know, is set).
func KindOf(t *pb.Transaction) OpKind {
	if t == nil {
		return OpUnknown
	}
	switch t.GetOperation().(type) {
	case *pb.Transaction_Append_:
		return OpAppend
	case *pb.Transaction_Delete_:
		return OpDelete
	case *pb.Transaction_Overwrite_:
		return OpOverwrite
	case *pb.Transaction_CreateIndex_:
		return OpCreateIndex
	case *pb.Transaction_Rewrite_:
		return OpRewrite
	case *pb.Transaction_Merge_:
		return OpMerge
	case *pb.Transaction_Restore_:
		return OpRestore
	case *pb.Transaction_ReserveFragments_:
		return OpReserveFragments
	case *pb.Transaction_Update_:
		return OpUpdate
	case *pb.Transaction_Project_:
		return OpProject
	case *pb.Transaction_UpdateConfig_:
		return OpUpdateConfig
	case *pb.Transaction_DataReplacement_:
		return OpDataReplacement
	case *pb.Transaction_UpdateMemWalState_:
		return OpUpdateMemWalState
	case *pb.Transaction_Clone_:
		return OpClone
	case *pb.Transaction_UpdateBases_:
		return OpUpdateBases
	case *pb.Transaction_DataOverlay_:
		return OpDataOverlay
	}
	return OpUnknown
}
